//! `lsb.events` and `lsb.acct`: LSF's text event-log format, its reader and its durable
//! writer (`/work/shared/lsf-reference/event-log.md` is the specification).
//!
//! This crate owns everything mbatchd keeps on disk in its log directory:
//!
//! | file | API |
//! |---|---|
//! | `lsb.events` | [`EventLog`] (replay, group-commit append, [`EventLog::switch`]), [`read_events`] / [`EventReader`] (bhist) |
//! | `lsb.events.N` | written by [`EventLog::switch`]; [`event_files`] lists them newest first |
//! | `lsb.acct`, `lsb.acct.N` | [`AcctLog`] (append), [`read_acct`] (bacct), [`acct_files`], [`acct_tail`] and [`AcctMatch`] (which job ends a replay asks records for lsb.acct lacks after a crash) |
//! | `#lsb.event.lock` | [`EventLock`] |
//! | `spool/<n>.seg` | [`JobSpool`]: the job files of many submissions, one `fdatasync` per group |
//! | `info/<submitTime>.<jobId>` | [`spool_job_file`], [`read_job_file`], [`remove_job_file`] (a dispatched job's file for LSF tools; the fallback spool) |
//!
//! **Inputs**: [`Record`] values to write; files and lines to read. **Outputs**: text lines
//! in LSF's format, parsed [`Record`]s, errors that name the file, line and field. All I/O
//! is synchronous `std` I/O (no async runtime), so the deterministic scheduler core can use
//! the types and the parser directly; mbatchd calls the file layer from its state-owning
//! task (or a blocking thread).
//!
//! # Format
//!
//! One record per line: `"TYPE" "version" eventTime` followed by the type's fields
//! ([`Record`] has one variant per type, each a struct with the spec's fields in order).
//! Strings are always double-quoted with an embedded `"` doubled and newlines deleted;
//! integers are `%d`; floats use LSF's per-field `printf` formats (`%6.2f` hostFactor in
//! `JOB_NEW`, `%3.1f` in `JOB_START`/`JOB_FINISH`, `%4.4f` cpuTime, `%1.6f` / `%1.0f`
//! rusage with `-1` kept as `-1`). [`split_fields`] is the tokenizer; [`parse_line`] and
//! [`Record::to_line`] convert whole lines.
//!
//! Reading is prefix-tolerant and version-gated ([`Dialect`]): integer versions are
//! OpenLava (`"40"`) or volclava (`"2x"`, which inserts `postExecCmd` and appends its own
//! fields), dotted versions are IBM LSF or Basalt. Surplus trailing fields are ignored;
//! unknown record types become [`Record::Unknown`]; `SHORT_EVENTFILE` host lists
//! (`"4*hostA"`) are expanded.
//!
//! # What Basalt writes
//!
//! Version [`BASALT_EVENT_VERSION`] (`"10.1"`), the OpenLava 2.x field order that is a
//! prefix of IBM LSF's, and Basalt's own fields only at the end of a record:
//!
//! * `JOB_NEW`/`JOB_MODIFY`: the OpenLava 4 layout (…`userPriority "userGroup"
//!   abs_run_limit "job_group" priority`), then the mark `"BASALT"`, then `"specifiedCwd"`
//!   (the `-cwd` value) and `isScript`, then [`JobNew::basalt_extra`] for fields a later
//!   Basalt adds. Everything else mbatchd needs to rebuild a job already has a classic
//!   field: `-oo`/`-eo` and hold are `options2` bits, the run limit is `rlimits[RUN]`,
//!   `-n min,max` is numProcessors/maxNumProcessors, `-G` is userGroup; the environment
//!   and the script text are in the spooled job file. The mark is what tells Basalt's
//!   `"10.1"` records from IBM LSF ones, whose fields after `loginShell` differ and are
//!   kept verbatim in [`JobNew::foreign_tail`].
//! * `JOB_MODIFY2` (`bmod`): OpenLava's layout (fields present as their option bits
//!   say), then `"BASALT" basaltOptions "postExecCmd" "requeueExitValues" "app"
//!   "specifiedCwd" "userGroup"` ([`modify`] bits for Basalt's `-Ep`, `-Q`, `-app`,
//!   `-cwd`, `-G` and their `n` forms), then [`JobModify2::basalt_extra`]. A dotted
//!   `JOB_MODIFY2` without the mark (IBM LSF's) stays a [`Record::Unknown`].
//! * `JOB_FINISH`: the OpenLava layout, then `"BASALT"` and [`JobFinish::basalt_extra`].
//! * `JOB_START`: `… idx "userGroup" "effectiveResReq"`; `JOB_STATUS`: `… idx maxMem
//!   avgMem` when [`JobStatus::mem`] is set, and when the job has a term reason `… idx
//!   maxMem avgMem "BASALT" "termReason"` (unset memory written `-1 -1`), then
//!   [`JobStatus::basalt_extra`]; `MBD_DIE`: `… exitCode "message"`.
//! * Never volclava's `postExecCmd` (it would shift `jobName`).
//!
//! With no `-m` hosts a Basalt `JOB_NEW` keeps the gawk positions clients read: `$4` job
//! id, `$5` user id, `$42` job name, `$43` command. Clients that split with
//! `FPAT = "([^ ]+)|(\"[^\"]+\")"` see a quoted field as one field when it has no embedded
//! quote, or when it has embedded (doubled) quotes but no space; a field with both a
//! doubled quote and a space (e.g. the command `env | grep -E "^LSB_" | sort`) is split
//! into several FPAT fields, which shifts every later position. Only fields before `$42`
//! can move `$42`/`$43` that way (in practice `dependCond` or `preExecCmd` containing
//! quotes and spaces); a quoted command still starts at `$43`. The `tests/gawk_fpat.rs`
//! test pins this behaviour.
//!
//! # Durability
//!
//! [`EventLog::append`] writes all lines of one scheduling-loop iteration with one write
//! and one `fdatasync` (group commit) and cuts the file back to its previous length if
//! either fails, so a failed append leaves no partial line. On open, an incomplete last
//! line (a crash mid-write) is cut off and reported ([`Replay::torn_tail`]); any complete
//! line that does not parse stops the open with [`EventLogError::Damaged`], whose message
//! tells the administrator how to recover. A fresh `lsb.events` starts with volclava's
//! header, `#80` padded to 80 bytes, whose offset points just past the header.
//! `lsb.acct` has no header line.
//!
//! # Not here
//!
//! The lock's waiting policy (mbatchd), the choice of records a switch carries over and
//! when to switch (mbatchd: `MAX_JOB_NUM` JOB_CLEANs, through basalt-sched's
//! `carry_over`), the duplicate log (mbatchd's journal), `lsb.acct` archiving
//! (`ACCT_ARCHIVE_*`). `lsb.events.index` is in [`index`]; explicit recovery of a corrupt
//! log in [`recover_events`].

mod error;
mod field;
mod file;
pub mod index;
mod jobspool;
mod lock;
mod record;
mod recover;
mod spool;

pub use error::{EventLogError, LockError, ParseError};
pub use field::{Field, split_fields};
pub use file::{
    ACCT_FILE, AcctLog, AcctMatch, AcctReader, AppendStats, EVENTS_FILE, EndKey, EventLog,
    EventReader, FRESH_HEADER_LEN, OpenInfo, Replay, SwitchReport, SyncPolicy, acct_files,
    acct_tail, event_files, fresh_header, parse_header, read_acct, read_events,
};
pub use index::{INDEX_FILE, IndexError, JobIdIndex};
pub use jobspool::{JobSpool, SEGMENT_MAX, SPOOL_DIR};
pub use lock::{EventLock, LOCK_FILE, LockInfo};
pub use record::{
    BASALT_EVENT_VERSION, BASALT_MARK, Chkpnt, Dialect, FsUsage, Header, HostCtrl, JobAccept,
    JobClean, JobExecute, JobFinish, JobForce, JobForward, JobModify2, JobMove, JobNew, JobRequeue,
    JobSigact, JobSignal, JobStart, JobStartAccept, JobStatus, JobSwitch, LoadIndex, LogSwitch,
    MbdDie, MbdStart, MemUsage, Mig, QueueCtrl, Record, Rusage, VOLCLAVA_SUB_POST_EXEC, XFile,
    host_op, mbd_exit, modify, parse_line, queue_op, rlimit,
};
pub use recover::{DroppedLine, RecoverReport, recover_events};
pub use spool::{
    INFO_DIR, job_file_name, place_job_file, read_job_file, remove_job_file, spool_job_file,
    spool_job_file_unsynced,
};
