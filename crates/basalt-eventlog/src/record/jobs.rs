//! The job events of `lsb.events` after `JOB_NEW`: `JOB_START` (and `PRE_EXEC_START`),
//! `JOB_START_ACCEPT`, `JOB_EXECUTE`, `JOB_STATUS`, `JOB_SIGNAL`, `JOB_SWITCH`,
//! `JOB_MOVE`, `JOB_REQUEUE`, `JOB_CLEAN`, `JOB_FORCE`, `JOB_SIGACT`.

use super::{BASALT_EVENT_VERSION, BASALT_MARK, Dialect, Header, Rusage};
use crate::error::ParseError;
use crate::field::{Cursor, Field, LineWriter};

/// `JOB_START` (also `PRE_EXEC_START`): dispatch to hosts (pid 0 at this point).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct JobStart {
    pub header: Header,
    pub job_id: u64,
    /// `jStatus` bits (normally RUN).
    pub j_status: u32,
    pub job_pid: i64,
    pub job_pgid: i64,
    /// Written `%3.1f`.
    pub host_factor: f64,
    /// One entry per slot.
    pub exec_hosts: Vec<String>,
    pub queue_pre_cmd: String,
    pub queue_post_cmd: String,
    pub j_flags: u32,
    pub idx: u32,
    /// OpenLava 4 / Basalt.
    pub user_group: String,
    /// volclava / Basalt.
    pub effective_res_req: String,
}

/// `JOB_START_ACCEPT`: sbatchd reported the job's pid.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct JobStartAccept {
    pub header: Header,
    pub job_id: u64,
    pub job_pid: i64,
    pub job_pgid: i64,
    pub idx: u32,
    /// OpenLava 4 / Basalt (not written in volclava records).
    pub j_flags: u32,
}

/// `JOB_EXECUTE`: the job really runs as the user.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct JobExecute {
    pub header: Header,
    pub job_id: u64,
    pub exec_uid: i64,
    pub job_pgid: i64,
    pub exec_cwd: String,
    pub exec_home: String,
    pub exec_username: String,
    pub job_pid: i64,
    pub idx: u32,
}

/// volclava's / Basalt's trailing memory figures of `JOB_STATUS` (as the writer logged
/// them; Basalt: KB).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MemUsage {
    pub max_mem: i64,
    pub avg_mem: i64,
}

/// `JOB_STATUS`: a state change, with resource usage when the job ended.
///
/// Basalt (version [`BASALT_EVENT_VERSION`]) appends its own fields when it has any:
/// `… exitStatus idx maxMem avgMem "BASALT" "termReason"` then [`JobStatus::basalt_extra`]
/// (`maxMem avgMem` are written `-1 -1` when [`JobStatus::mem`] is unset, and read back as
/// unset). Without a term reason the record is the plain volclava-compatible layout. Readers
/// of other products stop after `avgMem`; Basalt reads the tail only behind the mark, so
/// OpenLava, volclava and IBM LSF records keep their meaning.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct JobStatus {
    pub header: Header,
    pub job_id: u64,
    /// `jStatus` bits (`basalt_core::job::status`).
    pub j_status: u32,
    /// Pending-reason code, suspend-reason bits or exit-reason bits (event-log.md §4.3).
    pub reason: u32,
    pub subreasons: u32,
    /// Written `%4.4f`.
    pub cpu_time: f64,
    pub end_time: i64,
    /// Present when the record's `ru` flag is 1.
    pub rusage: Option<Rusage>,
    /// Raw `wait()` status.
    pub exit_status: i32,
    pub idx: u32,
    /// volclava / Basalt trailing `maxMem avgMem`.
    pub mem: Option<MemUsage>,
    /// Basalt: why LSF ended the job (`TERM_OWNER`, `TERM_RUNLIMIT`, ...; "" = none).
    pub term_reason: String,
    /// Basalt: fields after the term reason (a newer Basalt's additions), kept verbatim.
    pub basalt_extra: Vec<Field>,
}

/// `JOB_SIGNAL`: `bkill` and friends (`signalSymbol` e.g. `"KILL"`, `"REQUEUE_PEND"`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct JobSignal {
    pub header: Header,
    pub job_id: u64,
    pub user_id: i64,
    pub run_count: i64,
    pub signal_symbol: String,
    pub idx: u32,
    pub user_name: String,
}

/// `JOB_SWITCH`: `bswitch` (note: userId comes before jobId).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct JobSwitch {
    pub header: Header,
    pub user_id: i64,
    pub job_id: u64,
    pub queue: String,
    pub idx: u32,
    pub user_name: String,
}

/// `JOB_MOVE`: `btop` (base 1) / `bbot` (base 2).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct JobMove {
    pub header: Header,
    pub user_id: i64,
    pub job_id: u64,
    pub position: i64,
    /// 1 = from the top (`btop`), 2 = from the bottom (`bbot`).
    pub base: i64,
    pub idx: u32,
    pub user_name: String,
}

/// `JOB_REQUEUE`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct JobRequeue {
    pub header: Header,
    pub job_id: u64,
    pub idx: u32,
}

/// `JOB_CLEAN`: a finished job purged from memory (counts toward log switching).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct JobClean {
    pub header: Header,
    pub job_id: u64,
    pub idx: u32,
}

/// `JOB_FORWARD` (MultiCluster, submission cluster): the job was forwarded to a
/// receive-jobs queue of a remote cluster. LSF's fields (`numReserHosts` is always 0 in
/// Basalt's records: no hosts are reserved remotely), then Basalt's: the remote queue.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct JobForward {
    pub header: Header,
    pub job_id: u64,
    pub num_reser_hosts: i64,
    pub cluster: String,
    pub idx: u32,
    pub job_rmt_attr: u32,
    pub queue: String,
}

/// `JOB_ACCEPT` (MultiCluster, execution cluster): job `job_id` here was accepted from
/// `cluster`, where it is `remote_jid`. LSF's fields, then Basalt's: the job's array
/// index there and that cluster's forward attempt.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct JobAccept {
    pub header: Header,
    pub job_id: u64,
    pub remote_jid: u64,
    pub cluster: String,
    pub idx: u32,
    pub job_rmt_attr: u32,
    pub remote_idx: u32,
    pub attempt: u32,
}

/// `JOB_FORCE`: `brun`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct JobForce {
    pub header: Header,
    pub job_id: u64,
    pub user_id: i64,
    pub idx: u32,
    pub options: u32,
    pub exec_hosts: Vec<String>,
    pub user_name: String,
}

/// `MIG` (OpenLava, LSF): `bmig` asked for the job's migration, to these hosts (none:
/// any).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Mig {
    pub header: Header,
    pub job_id: u64,
    pub asked_hosts: Vec<String>,
    pub user_id: i64,
    pub idx: u32,
    pub user_name: String,
}

/// `CHKPNT` (OpenLava, LSF): a checkpoint of the job ended (`ok` 1) or failed (0); its
/// period (seconds), the checkpointing process and its `LSB_CHKPNT_*` flags; Basalt
/// appends why it failed.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Chkpnt {
    pub header: Header,
    pub job_id: u64,
    pub period: i64,
    pub pid: i64,
    pub ok: i64,
    pub flags: i64,
    pub idx: u32,
    /// Basalt: why the checkpoint failed (written only when there is a reason).
    pub message: String,
}

/// `JOB_SIGACT`: a signal action (suspend/resume/terminate) started or finished on a host.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct JobSigact {
    pub header: Header,
    pub job_id: u64,
    pub period: i64,
    pub pid: i64,
    pub j_status: u32,
    pub reasons: u32,
    pub flags: i64,
    pub act_status: i64,
    pub signal_symbol: String,
    pub idx: u32,
}

field_table!(JobStart :: { parse_fields, write_fields } |r, d| {
    job_id: int = "jobId";
    j_status: bits = "jStatus";
    job_pid: int = "jobPid";
    job_pgid: int = "jobPGid";
    host_factor: f3_1 = "hostFactor";
    exec_hosts: hosts("numExHosts") = "execHosts";
    queue_pre_cmd: str = "queuePreCmd";
    queue_post_cmd: str = "queuePostCmd";
    j_flags: bits = "jFlags";
    idx: int = "idx";
});

impl JobStart {
    pub(super) fn parse(c: &mut Cursor<'_>, header: Header) -> Result<JobStart, ParseError> {
        let d = header.dialect();
        let mut j = JobStart {
            header,
            ..JobStart::default()
        };
        JobStart::parse_fields(&mut j, d, c)?;
        // The tail differs by dialect and is read while present.
        match d {
            Dialect::OpenLava => j.user_group = c.opt_str("userGroup")?.unwrap_or_default(),
            Dialect::Volclava => {
                j.effective_res_req = c.opt_str("effectiveResReq")?.unwrap_or_default();
            }
            Dialect::Lsf => {
                if let Some(g) = c.opt_str("userGroup")? {
                    j.user_group = g;
                    j.effective_res_req = c.opt_str("effectiveResReq")?.unwrap_or_default();
                }
            }
        }
        Ok(j)
    }

    pub(super) fn write(&self, kind: &str, out: &mut String) {
        let d = self.header.dialect();
        let mut w = LineWriter::start(out, kind, &self.header.version, self.header.time);
        JobStart::write_fields(self, d, &mut w);
        match d {
            Dialect::OpenLava => {
                w.str(&self.user_group);
            }
            Dialect::Volclava => {
                w.str(&self.effective_res_req);
            }
            Dialect::Lsf => {
                w.str(&self.user_group).str(&self.effective_res_req);
            }
        }
    }
}

field_table!(JobStartAccept |r, d| {
    job_id: int = "jobId";
    job_pid: int = "jobPid";
    job_pgid: int = "jobPGid";
    idx: int = "idx";
    // volclava records have no jFlags.
    j_flags: opt_bits = "jFlags", write_if d != Dialect::Volclava;
});

field_table!(JobExecute |r, d| {
    job_id: int = "jobId";
    exec_uid: int = "execUid";
    job_pgid: int = "jobPGid";
    exec_cwd: str = "execCwd";
    exec_home: str = "execHome";
    exec_username: str = "execUsername";
    job_pid: int = "jobPid";
    idx: int = "idx";
});

field_table!(JobStatus :: { parse_fields, write_fields } |r, d| {
    job_id: int = "jobId";
    j_status: bits = "jStatus";
    reason: bits = "reason";
    subreasons: bits = "subreasons";
    cpu_time: f4_4 = "cpuTime";
    end_time: int = "endTime";
    rusage: opt_rusage("ru") = "rusage";
    exit_status: int = "exitStatus";
    idx: int = "idx";
});

impl JobStatus {
    pub(super) fn parse(c: &mut Cursor<'_>, header: Header) -> Result<Self, ParseError> {
        let d = header.dialect();
        let mut j = JobStatus {
            header,
            ..JobStatus::default()
        };
        JobStatus::parse_fields(&mut j, d, c)?;
        if d == Dialect::Lsf {
            let save = *c;
            if j.parse_basalt_tail(c).is_ok() {
                return Ok(j);
            }
            *c = save;
            j.mem = None;
            j.term_reason.clear();
            j.basalt_extra.clear();
        }
        if let Some(max_mem) = c.opt_int("maxMem")? {
            let avg_mem = c.opt_int("avgMem")?.unwrap_or(0);
            j.mem = Some(MemUsage { max_mem, avg_mem });
        }
        Ok(j)
    }

    /// `maxMem avgMem "BASALT" "termReason" extra…`; any mismatch means there is none.
    fn parse_basalt_tail(&mut self, c: &mut Cursor<'_>) -> Result<(), ParseError> {
        let max_mem: i64 = c.int("maxMem")?;
        let avg_mem: i64 = c.int("avgMem")?;
        if c.str("Basalt mark")? != BASALT_MARK {
            return Err(ParseError::new(c.next_index() - 1, "no Basalt mark"));
        }
        self.term_reason = c.str("termReason")?;
        self.basalt_extra = c.rest()?;
        self.mem = (max_mem != -1 || avg_mem != -1).then_some(MemUsage { max_mem, avg_mem });
        Ok(())
    }

    pub(super) fn write(&self, kind: &str, out: &mut String) {
        let mut w = LineWriter::start(out, kind, &self.header.version, self.header.time);
        JobStatus::write_fields(self, self.header.dialect(), &mut w);
        let tail = self.header.version == BASALT_EVENT_VERSION
            && (!self.term_reason.is_empty() || !self.basalt_extra.is_empty());
        if tail {
            let m = self.mem.unwrap_or(MemUsage {
                max_mem: -1,
                avg_mem: -1,
            });
            w.int(m.max_mem)
                .int(m.avg_mem)
                .str(BASALT_MARK)
                .str(&self.term_reason)
                .fields(&self.basalt_extra);
        } else if let Some(m) = self.mem {
            w.int(m.max_mem).int(m.avg_mem);
        }
    }
}

field_table!(JobSignal |r, d| {
    job_id: int = "jobId";
    user_id: int = "userId";
    run_count: int = "runCount";
    signal_symbol: str = "signalSymbol";
    idx: int = "idx";
    user_name: str = "userName";
});

// Note: userId comes before jobId.
field_table!(JobSwitch |r, d| {
    user_id: int = "userId";
    job_id: int = "jobId";
    queue: str = "queue";
    idx: int = "idx";
    user_name: str = "userName";
});

field_table!(JobMove |r, d| {
    user_id: int = "userId";
    job_id: int = "jobId";
    position: int = "position";
    base: int = "base";
    idx: int = "idx";
    user_name: str = "userName";
});

field_table!(JobRequeue |r, d| {
    job_id: int = "jobId";
    idx: int = "idx";
});

field_table!(JobClean |r, d| {
    job_id: int = "jobId";
    idx: int = "idx";
});

field_table!(JobForward |r, d| {
    job_id: int = "jobId";
    num_reser_hosts: int = "numReserHosts";
    cluster: str = "cluster";
    idx: int = "idx";
    job_rmt_attr: bits = "jobRmtAttr";
    queue: opt_str = "queue";
});

field_table!(JobAccept |r, d| {
    job_id: int = "jobId";
    remote_jid: int = "remoteJid";
    cluster: str = "cluster";
    idx: int = "idx";
    job_rmt_attr: bits = "jobRmtAttr";
    remote_idx: opt_bits = "remoteIdx";
    attempt: opt_bits = "attempt";
});

field_table!(JobForce |r, d| {
    job_id: int = "jobId";
    user_id: int = "userId";
    idx: int = "idx";
    options: bits = "options";
    exec_hosts: hosts("numExecHosts") = "execHosts";
    user_name: str = "userName";
});

field_table!(JobSigact |r, d| {
    job_id: int = "jobId";
    period: int = "period";
    pid: int = "pid";
    j_status: bits = "jStatus";
    reasons: bits = "reasons";
    flags: int = "flags";
    act_status: int = "actStatus";
    signal_symbol: str = "signalSymbol";
    idx: int = "idx";
});

field_table!(Mig |r, d| {
    job_id: int = "jobId";
    asked_hosts: hosts("numAskedHosts") = "askedHosts";
    user_id: int = "userId";
    idx: int = "idx";
    user_name: str = "userName";
});

field_table!(Chkpnt |r, d| {
    job_id: int = "jobId";
    period: int = "period";
    pid: int = "pid";
    ok: int = "ok";
    flags: int = "flags";
    idx: int = "idx";
    message: opt_str = "message", write_if !r.message.is_empty();
});
