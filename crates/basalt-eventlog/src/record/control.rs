//! The queue, host and mbatchd records: `QUEUE_CTRL`, `HOST_CTRL`, `MBD_START`,
//! `MBD_DIE`, `LOAD_INDEX`, `LOG_SWITCH`.

use super::{Dialect, Header};

/// `QUEUE_CTRL` op codes.
pub mod queue_op {
    pub const OPEN: i64 = 1;
    pub const CLOSE: i64 = 2;
    pub const ACTIVATE: i64 = 3;
    pub const INACTIVATE: i64 = 4;
}

/// `HOST_CTRL` op codes.
pub mod host_op {
    pub const OPEN: i64 = 1;
    pub const CLOSE: i64 = 2;
    pub const REBOOT: i64 = 3;
    pub const SHUTDOWN: i64 = 4;
}

/// `QUEUE_CTRL`: `badmin qopen/qclose/qact/qinact` ([`queue_op`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct QueueCtrl {
    pub header: Header,
    pub op_code: i64,
    pub queue: String,
    pub user_id: i64,
    pub user_name: String,
    /// `-C` comment.
    pub message: String,
}

/// `HOST_CTRL`: `badmin hopen/hclose/...` ([`host_op`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HostCtrl {
    pub header: Header,
    pub op_code: i64,
    pub host: String,
    pub user_id: i64,
    pub user_name: String,
    /// `-C` comment.
    pub message: String,
}

/// `MBD_START`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MbdStart {
    pub header: Header,
    pub master: String,
    pub cluster: String,
    pub num_hosts: i64,
    pub num_queues: i64,
}

/// `MBD_DIE` exit codes.
pub mod mbd_exit {
    pub const RESIGN: i64 = 201;
    pub const RECONFIG: i64 = 202;
    pub const FATAL: i64 = 203;
    pub const MEMORY: i64 = 204;
    pub const CONFIG: i64 = 205;
}

/// `MBD_DIE` ([`mbd_exit`] codes).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MbdDie {
    pub header: Header,
    pub master: String,
    pub num_remove_jobs: i64,
    pub exit_code: i64,
    /// volclava / Basalt.
    pub message: String,
}

/// `LOAD_INDEX`: the load-index names, so that index positions in reasons are known.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LoadIndex {
    pub header: Header,
    pub names: Vec<String>,
}

/// `LOG_SWITCH`. Basalt appends, when it has any, the fairshare history it carries
/// into the new file: `nFs`, then `"queue" "user" cpuSeconds runSeconds` each (readers
/// of the LSF layout stop after `lastJobId`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LogSwitch {
    pub header: Header,
    pub last_job_id: u64,
    pub fairshare: Vec<FsUsage>,
}

/// One user's decayed fairshare usage in one queue, as of its record's time.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FsUsage {
    pub queue: String,
    pub user: String,
    pub cpu_seconds: f64,
    pub run_seconds: f64,
}

field_table!(QueueCtrl |r, d| {
    op_code: int = "opCode";
    queue: str = "queue";
    user_id: int = "userId";
    user_name: str = "userName";
    message: opt_str = "message";
});

field_table!(HostCtrl |r, d| {
    op_code: int = "opCode";
    host: str = "host";
    user_id: int = "userId";
    user_name: str = "userName";
    message: opt_str = "message";
});

field_table!(MbdStart |r, d| {
    master: str = "master";
    cluster: str = "cluster";
    num_hosts: int = "numHosts";
    num_queues: int = "numQueues";
});

field_table!(MbdDie |r, d| {
    master: str = "master";
    num_remove_jobs: int = "numRemoveJobs";
    exit_code: int = "exitCode";
    // OpenLava's MBD_DIE has no message field: written there only when there is one.
    message: opt_str = "message", write_if d != Dialect::OpenLava || !r.message.is_empty();
});

field_table!(LoadIndex |r, d| {
    names: names("nIdx") = "name";
});

impl LogSwitch {
    pub(super) fn parse(
        c: &mut crate::field::Cursor<'_>,
        header: Header,
    ) -> Result<LogSwitch, crate::error::ParseError> {
        let last_job_id = c.int("lastJobId")?;
        let n: i64 = c.opt_int("nFs")?.unwrap_or(0);
        let mut fairshare = Vec::new();
        for _ in 0..n.max(0) {
            fairshare.push(FsUsage {
                queue: c.str("fs.queue")?,
                user: c.str("fs.user")?,
                cpu_seconds: c.float("fs.cpuSeconds")?,
                run_seconds: c.float("fs.runSeconds")?,
            });
        }
        Ok(LogSwitch {
            header,
            last_job_id,
            fairshare,
        })
    }

    pub(super) fn write(&self, kind: &str, out: &mut String) {
        let mut w =
            crate::field::LineWriter::start(out, kind, &self.header.version, self.header.time);
        w.int(self.last_job_id);
        if !self.fairshare.is_empty() {
            w.int(self.fairshare.len());
            for f in &self.fairshare {
                w.str(&f.queue)
                    .str(&f.user)
                    .f4_4(f.cpu_seconds)
                    .f4_4(f.run_seconds);
            }
        }
    }
}
