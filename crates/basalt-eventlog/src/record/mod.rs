//! The records of `lsb.events` and `lsb.acct` (event-log.md §3): one struct per record
//! type, in the spec's field order, with its parser and writer. This module owns the
//! common header, the dialects, the [`Record`] enum and [`parse_line`]. Each record
//! type's fields are one table (the `field_table!` macro of `table`) in its group's
//! module: `job_new` (`JOB_NEW`, `JOB_MODIFY`), `job_modify` (`JOB_MODIFY2`, and the
//! [`modify`] constants), `jobs` (the other job events), `control`
//! (queue, host and mbatchd events), `job_finish` (`lsb.acct`), `usage` (the
//! resource-usage block).

#[macro_use]
mod table;

mod control;
mod job_finish;
mod job_modify;
mod job_new;
mod jobs;
mod usage;

pub use control::{
    FsUsage, HostCtrl, LoadIndex, LogSwitch, MbdDie, MbdStart, QueueCtrl, host_op, mbd_exit,
    queue_op,
};
pub use job_finish::JobFinish;
pub use job_modify::{JobModify2, modify};
pub use job_new::{JobNew, XFile};
pub use jobs::{
    Chkpnt, JobAccept, JobClean, JobExecute, JobForce, JobForward, JobMove, JobRequeue, JobSigact,
    JobSignal, JobStart, JobStartAccept, JobStatus, JobSwitch, MemUsage, Mig,
};
pub use usage::Rusage;

use crate::error::ParseError;
use crate::field::{Cursor, Field, LineWriter};

/// The version string Basalt writes in every record it creates (LSF 10.1).
pub const BASALT_EVENT_VERSION: &str = "10.1";

/// The string field that opens Basalt's own trailing fields in `JOB_NEW` and `JOB_FINISH`
/// records of the dotted-version (LSF) dialect. See [`JobNew`].
pub const BASALT_MARK: &str = "BASALT";

/// volclava's `SUB_POST_EXEC` option bit: when set in a volclava (`"2x"`) record, a
/// `"postExecCmd"` field follows `"preExecCmd"` in `JOB_NEW` and `JOB_FINISH`.
/// Basalt never sets it.
pub const VOLCLAVA_SUB_POST_EXEC: u32 = 0x4000_0000;

/// Indices into `rlimits` (`LSF_RLIMIT_*` numbering); values are `-1` when unlimited.
pub mod rlimit {
    pub use basalt_core::rlimit::*;
    /// The names used in error messages, in order.
    pub const NAMES: [&str; COUNT] = [
        "rLimits[CPU]",
        "rLimits[FSIZE]",
        "rLimits[DATA]",
        "rLimits[STACK]",
        "rLimits[CORE]",
        "rLimits[RSS]",
        "rLimits[NOFILE]",
        "rLimits[OPEN_MAX]",
        "rLimits[SWAP]",
        "rLimits[RUN]",
        "rLimits[PROCESS]",
    ];
}

/// Which product's layout a record follows, decided from its version string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// An integer version other than 20–29 (OpenLava `"40"`, older OpenLava `"2"`, `"3"`).
    OpenLava,
    /// Integer versions 20–29 (volclava 2.x writes `"21"`, `"22"`).
    Volclava,
    /// Dotted versions: IBM LSF (`"9.13"`, `"10.108"`) and Basalt (`"10.1"`).
    Lsf,
}

impl Dialect {
    /// The dialect of a version string.
    pub fn of(version: &str) -> Dialect {
        if !version.is_empty() && version.bytes().all(|b| b.is_ascii_digit()) {
            match version.parse::<u32>() {
                Ok(20..=29) => Dialect::Volclava,
                _ => Dialect::OpenLava,
            }
        } else {
            Dialect::Lsf
        }
    }
}

/// The common header of every record: `"TYPE" "version" eventTime` (the type is the
/// [`Record`] variant).
#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    pub version: String,
    /// Seconds since the epoch.
    pub time: i64,
}

impl Header {
    /// A header for a record Basalt creates now: version [`BASALT_EVENT_VERSION`].
    pub fn new(time: i64) -> Header {
        Header {
            version: BASALT_EVENT_VERSION.to_owned(),
            time,
        }
    }

    /// The layout this header's version selects.
    pub fn dialect(&self) -> Dialect {
        Dialect::of(&self.version)
    }
}

impl Default for Header {
    fn default() -> Self {
        Header::new(0)
    }
}

// ------------------------------------------------------------------------------- Record

/// One record of `lsb.events` or `lsb.acct`.
///
/// The large variants are boxed so that a replayed log of a million records stays small.
#[derive(Debug, Clone, PartialEq)]
pub enum Record {
    JobNew(Box<JobNew>),
    /// `JOB_MODIFY`: the whole job rewritten (same layout as `JOB_NEW`).
    JobModify(Box<JobNew>),
    /// `JOB_MODIFY2`: the changes `bmod` made.
    JobModify2(Box<JobModify2>),
    JobStart(JobStart),
    /// `PRE_EXEC_START` (same layout as `JOB_START`).
    PreExecStart(JobStart),
    JobStartAccept(JobStartAccept),
    JobExecute(JobExecute),
    JobStatus(JobStatus),
    JobSignal(JobSignal),
    JobSwitch(JobSwitch),
    JobMove(JobMove),
    JobRequeue(JobRequeue),
    JobClean(JobClean),
    JobForce(JobForce),
    /// `MIG`: a migration asked with `bmig`.
    Mig(Mig),
    /// `CHKPNT`: a checkpoint's outcome.
    Chkpnt(Chkpnt),
    JobForward(JobForward),
    JobAccept(JobAccept),
    JobSigact(JobSigact),
    QueueCtrl(QueueCtrl),
    HostCtrl(HostCtrl),
    MbdStart(MbdStart),
    MbdDie(MbdDie),
    LoadIndex(LoadIndex),
    LogSwitch(LogSwitch),
    /// `JOB_FINISH` (lsb.acct).
    JobFinish(Box<JobFinish>),
    /// A type this crate does not model (`UNFULFILL`, `JOB_MSG`,
    /// `SBD_JOB_STATUS`, IBM LSF types, ...), or an IBM LSF `JOB_MODIFY2` (a dotted
    /// version without the Basalt mark, see [`JobModify2`]): kept with its fields so it
    /// can be written back unchanged.
    Unknown {
        kind: String,
        header: Header,
        fields: Vec<Field>,
    },
}

macro_rules! from_struct {
    ($t:ty, $v:ident) => {
        impl From<$t> for Record {
            fn from(r: $t) -> Record {
                Record::$v(r)
            }
        }
    };
    (box $t:ty, $v:ident) => {
        impl From<$t> for Record {
            fn from(r: $t) -> Record {
                Record::$v(Box::new(r))
            }
        }
    };
}

from_struct!(box JobNew, JobNew);
from_struct!(box JobModify2, JobModify2);
from_struct!(JobStart, JobStart);
from_struct!(JobStartAccept, JobStartAccept);
from_struct!(JobExecute, JobExecute);
from_struct!(JobStatus, JobStatus);
from_struct!(JobSignal, JobSignal);
from_struct!(JobSwitch, JobSwitch);
from_struct!(JobMove, JobMove);
from_struct!(JobRequeue, JobRequeue);
from_struct!(JobClean, JobClean);
from_struct!(JobForce, JobForce);
from_struct!(Mig, Mig);
from_struct!(Chkpnt, Chkpnt);
from_struct!(JobForward, JobForward);
from_struct!(JobAccept, JobAccept);
from_struct!(JobSigact, JobSigact);
from_struct!(QueueCtrl, QueueCtrl);
from_struct!(HostCtrl, HostCtrl);
from_struct!(MbdStart, MbdStart);
from_struct!(MbdDie, MbdDie);
from_struct!(LoadIndex, LoadIndex);
from_struct!(LogSwitch, LogSwitch);
from_struct!(box JobFinish, JobFinish);

impl Record {
    /// The record type as written (`"JOB_NEW"`, ...).
    pub fn kind(&self) -> &str {
        match self {
            Record::JobNew(_) => "JOB_NEW",
            Record::JobModify(_) => "JOB_MODIFY",
            Record::JobModify2(_) => "JOB_MODIFY2",
            Record::JobStart(_) => "JOB_START",
            Record::PreExecStart(_) => "PRE_EXEC_START",
            Record::JobStartAccept(_) => "JOB_START_ACCEPT",
            Record::JobExecute(_) => "JOB_EXECUTE",
            Record::JobStatus(_) => "JOB_STATUS",
            Record::JobSignal(_) => "JOB_SIGNAL",
            Record::JobSwitch(_) => "JOB_SWITCH",
            Record::JobMove(_) => "JOB_MOVE",
            Record::JobRequeue(_) => "JOB_REQUEUE",
            Record::JobClean(_) => "JOB_CLEAN",
            Record::JobForce(_) => "JOB_FORCE",
            Record::Mig(_) => "MIG",
            Record::Chkpnt(_) => "CHKPNT",
            Record::JobForward(_) => "JOB_FORWARD",
            Record::JobAccept(_) => "JOB_ACCEPT",
            Record::JobSigact(_) => "JOB_SIGACT",
            Record::QueueCtrl(_) => "QUEUE_CTRL",
            Record::HostCtrl(_) => "HOST_CTRL",
            Record::MbdStart(_) => "MBD_START",
            Record::MbdDie(_) => "MBD_DIE",
            Record::LoadIndex(_) => "LOAD_INDEX",
            Record::LogSwitch(_) => "LOG_SWITCH",
            Record::JobFinish(_) => "JOB_FINISH",
            Record::Unknown { kind, .. } => kind,
        }
    }

    /// The common header.
    pub fn header(&self) -> &Header {
        match self {
            Record::JobNew(r) | Record::JobModify(r) => &r.header,
            Record::JobModify2(r) => &r.header,
            Record::JobStart(r) | Record::PreExecStart(r) => &r.header,
            Record::JobStartAccept(r) => &r.header,
            Record::JobExecute(r) => &r.header,
            Record::JobStatus(r) => &r.header,
            Record::JobSignal(r) => &r.header,
            Record::JobSwitch(r) => &r.header,
            Record::JobMove(r) => &r.header,
            Record::JobRequeue(r) => &r.header,
            Record::JobClean(r) => &r.header,
            Record::JobForce(r) => &r.header,
            Record::Mig(r) => &r.header,
            Record::Chkpnt(r) => &r.header,
            Record::JobForward(r) => &r.header,
            Record::JobAccept(r) => &r.header,
            Record::JobSigact(r) => &r.header,
            Record::QueueCtrl(r) => &r.header,
            Record::HostCtrl(r) => &r.header,
            Record::MbdStart(r) => &r.header,
            Record::MbdDie(r) => &r.header,
            Record::LoadIndex(r) => &r.header,
            Record::LogSwitch(r) => &r.header,
            Record::JobFinish(r) => &r.header,
            Record::Unknown { header, .. } => header,
        }
    }

    /// The event time (seconds since the epoch).
    pub fn time(&self) -> i64 {
        self.header().time
    }

    /// The job the record is about, for job records (for `Unknown` records: none; for
    /// `JOB_MODIFY2`, the job of [`JobModify2::job_key`]).
    pub fn job_id(&self) -> Option<u64> {
        Some(match self {
            Record::JobNew(r) | Record::JobModify(r) => r.job_id,
            Record::JobModify2(r) => return r.job_key().map(|(id, _)| id),
            Record::JobStart(r) | Record::PreExecStart(r) => r.job_id,
            Record::JobStartAccept(r) => r.job_id,
            Record::JobExecute(r) => r.job_id,
            Record::JobStatus(r) => r.job_id,
            Record::JobSignal(r) => r.job_id,
            Record::JobSwitch(r) => r.job_id,
            Record::JobMove(r) => r.job_id,
            Record::JobRequeue(r) => r.job_id,
            Record::JobClean(r) => r.job_id,
            Record::JobForce(r) => r.job_id,
            Record::Mig(r) => r.job_id,
            Record::Chkpnt(r) => r.job_id,
            Record::JobForward(r) => r.job_id,
            Record::JobAccept(r) => r.job_id,
            Record::JobSigact(r) => r.job_id,
            Record::JobFinish(r) => r.job_id,
            _ => return None,
        })
    }

    /// The array index of a job record (0 for an ordinary job; for a `JOB_MODIFY2` of
    /// several elements, 0: the whole job).
    pub fn idx(&self) -> Option<u32> {
        Some(match self {
            Record::JobNew(r) | Record::JobModify(r) => r.idx,
            Record::JobModify2(r) => return r.job_key().map(|(_, idx)| idx),
            Record::JobStart(r) | Record::PreExecStart(r) => r.idx,
            Record::JobStartAccept(r) => r.idx,
            Record::JobExecute(r) => r.idx,
            Record::JobStatus(r) => r.idx,
            Record::JobSignal(r) => r.idx,
            Record::JobSwitch(r) => r.idx,
            Record::JobMove(r) => r.idx,
            Record::JobRequeue(r) => r.idx,
            Record::JobClean(r) => r.idx,
            Record::JobForce(r) => r.idx,
            Record::Mig(r) => r.idx,
            Record::Chkpnt(r) => r.idx,
            Record::JobForward(r) => r.idx,
            Record::JobAccept(r) => r.idx,
            Record::JobSigact(r) => r.idx,
            Record::JobFinish(r) => r.idx,
            _ => return None,
        })
    }

    /// The record as one line, without the newline.
    pub fn to_line(&self) -> String {
        let mut s = String::with_capacity(160);
        self.write_line(&mut s);
        s
    }

    /// Append the record's line (without a newline) to `out`.
    pub fn write_line(&self, out: &mut String) {
        let kind = self.kind();
        match self {
            Record::JobNew(r) | Record::JobModify(r) => r.write(kind, out),
            Record::JobModify2(r) => r.write(kind, out),
            Record::JobStart(r) | Record::PreExecStart(r) => r.write(kind, out),
            Record::JobStartAccept(r) => r.write(kind, out),
            Record::JobExecute(r) => r.write(kind, out),
            Record::JobStatus(r) => r.write(kind, out),
            Record::JobSignal(r) => r.write(kind, out),
            Record::JobSwitch(r) => r.write(kind, out),
            Record::JobMove(r) => r.write(kind, out),
            Record::JobRequeue(r) => r.write(kind, out),
            Record::JobClean(r) => r.write(kind, out),
            Record::JobForce(r) => r.write(kind, out),
            Record::Mig(r) => r.write(kind, out),
            Record::Chkpnt(r) => r.write(kind, out),
            Record::JobForward(r) => r.write(kind, out),
            Record::JobAccept(r) => r.write(kind, out),
            Record::JobSigact(r) => r.write(kind, out),
            Record::QueueCtrl(r) => r.write(kind, out),
            Record::HostCtrl(r) => r.write(kind, out),
            Record::MbdStart(r) => r.write(kind, out),
            Record::MbdDie(r) => r.write(kind, out),
            Record::LoadIndex(r) => r.write(kind, out),
            Record::LogSwitch(r) => r.write(kind, out),
            Record::JobFinish(r) => r.write(kind, out),
            Record::Unknown { header, fields, .. } => {
                LineWriter::start(out, kind, &header.version, header.time).fields(fields);
            }
        }
    }
}

fn valid_version(v: &str) -> bool {
    v.as_bytes().first().is_some_and(u8::is_ascii_digit)
        && v.bytes().all(|b| b.is_ascii_digit() || b == b'.')
}

/// Parse one line of `lsb.events` or `lsb.acct`.
///
/// Returns `Ok(None)` for blank lines and `#` lines (the header, comments). A known type
/// is parsed by its layout for the record's [`Dialect`]; surplus trailing fields are
/// ignored; a type this crate does not model becomes [`Record::Unknown`], and so does a
/// dotted-version `JOB_MODIFY2` that is not Basalt's (IBM LSF's layout).
pub fn parse_line(line: &str) -> Result<Option<Record>, ParseError> {
    let t = line.trim_start_matches([' ', '\t']);
    if t.starts_with('#') {
        return Ok(None);
    }
    let mut c = Cursor::new(line);
    if c.at_end() {
        return Ok(None);
    }
    let kind = c.str("record type")?;
    let version = c.str("version")?;
    if !valid_version(&version) {
        return Err(ParseError::new(
            2,
            format!("version: {version:?} is not a version number"),
        ));
    }
    let time: i64 = c.int("event time")?;
    let h = Header { version, time };
    let c = &mut c;
    let rec = match kind.as_str() {
        "JOB_NEW" => Record::JobNew(Box::new(JobNew::parse(c, h)?)),
        "JOB_MODIFY" => Record::JobModify(Box::new(JobNew::parse(c, h)?)),
        "JOB_MODIFY2" => {
            let save = *c;
            let lsf = h.dialect() == Dialect::Lsf;
            match JobModify2::parse(c, h.clone()) {
                Ok(r) => Record::JobModify2(Box::new(r)),
                Err(_) if lsf => {
                    *c = save;
                    Record::Unknown {
                        kind,
                        header: h,
                        fields: c.rest()?,
                    }
                }
                Err(e) => return Err(e),
            }
        }
        "JOB_START" => Record::JobStart(JobStart::parse(c, h)?),
        "PRE_EXEC_START" => Record::PreExecStart(JobStart::parse(c, h)?),
        "JOB_START_ACCEPT" => Record::JobStartAccept(JobStartAccept::parse(c, h)?),
        "JOB_EXECUTE" => Record::JobExecute(JobExecute::parse(c, h)?),
        "JOB_STATUS" => Record::JobStatus(JobStatus::parse(c, h)?),
        "JOB_SIGNAL" => Record::JobSignal(JobSignal::parse(c, h)?),
        "JOB_SWITCH" => Record::JobSwitch(JobSwitch::parse(c, h)?),
        "JOB_MOVE" => Record::JobMove(JobMove::parse(c, h)?),
        "JOB_REQUEUE" => Record::JobRequeue(JobRequeue::parse(c, h)?),
        "JOB_CLEAN" => Record::JobClean(JobClean::parse(c, h)?),
        "JOB_FORCE" => Record::JobForce(JobForce::parse(c, h)?),
        // Written by OpenLava, LSF and Basalt; one that does not parse as
        // OpenLava's layout is kept as it is, like any type this crate does not model.
        "MIG" | "CHKPNT" => {
            let save = *c;
            let parsed = if kind == "MIG" {
                Mig::parse(c, h.clone()).map(Record::Mig)
            } else {
                Chkpnt::parse(c, h.clone()).map(Record::Chkpnt)
            };
            match parsed {
                Ok(r) => r,
                Err(_) => {
                    *c = save;
                    Record::Unknown {
                        kind,
                        header: h,
                        fields: c.rest()?,
                    }
                }
            }
        }
        "JOB_FORWARD" => Record::JobForward(JobForward::parse(c, h)?),
        "JOB_ACCEPT" => Record::JobAccept(JobAccept::parse(c, h)?),
        "JOB_SIGACT" => Record::JobSigact(JobSigact::parse(c, h)?),
        "QUEUE_CTRL" => Record::QueueCtrl(QueueCtrl::parse(c, h)?),
        "HOST_CTRL" => Record::HostCtrl(HostCtrl::parse(c, h)?),
        "MBD_START" => Record::MbdStart(MbdStart::parse(c, h)?),
        "MBD_DIE" => Record::MbdDie(MbdDie::parse(c, h)?),
        "LOAD_INDEX" => Record::LoadIndex(LoadIndex::parse(c, h)?),
        "LOG_SWITCH" => Record::LogSwitch(LogSwitch::parse(c, h)?),
        "JOB_FINISH" => Record::JobFinish(Box::new(JobFinish::parse(c, h)?)),
        _ => Record::Unknown {
            kind,
            header: h,
            fields: c.rest()?,
        },
    };
    Ok(Some(rec))
}
