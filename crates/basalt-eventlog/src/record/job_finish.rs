//! `JOB_FINISH`: the accounting record of `lsb.acct`.

use super::{BASALT_MARK, Dialect, Field, Header, Rusage, VOLCLAVA_SUB_POST_EXEC};
use crate::error::ParseError;
use crate::field::{Cursor, LineWriter};

/// `JOB_FINISH` (`lsb.acct`): the accounting record of a finished job.
///
/// Like [`JobNew`](super::JobNew), the layout is common up to `loginShell`; then
/// OpenLava/volclava write `idx maxRMem maxRSwap "inFileSpool" "commandSpool"`, Basalt
/// writes the same followed
/// by [`BASALT_MARK`] and [`JobFinish::basalt_extra`], and IBM LSF records keep their
/// tail in [`JobFinish::foreign_tail`]. The event time is the job's end time.
#[derive(Debug, Clone, PartialEq)]
pub struct JobFinish {
    pub header: Header,
    pub job_id: u64,
    pub user_id: i64,
    pub options: u32,
    pub num_processors: i64,
    pub submit_time: i64,
    pub begin_time: i64,
    pub term_time: i64,
    pub start_time: i64,
    pub user_name: String,
    pub queue: String,
    pub res_req: String,
    pub depend_cond: String,
    pub pre_exec_cmd: String,
    /// volclava only (see [`VOLCLAVA_SUB_POST_EXEC`]).
    pub post_exec_cmd: String,
    pub from_host: String,
    pub cwd: String,
    pub in_file: String,
    pub out_file: String,
    pub err_file: String,
    pub job_file: String,
    pub asked_hosts: Vec<String>,
    /// One entry per slot.
    pub exec_hosts: Vec<String>,
    /// Final `jStatus` (DONE or EXIT).
    pub j_status: u32,
    /// Written `%3.1f`.
    pub host_factor: f64,
    pub job_name: String,
    pub command: String,
    pub rusage: Rusage,
    pub mail_user: String,
    pub project_name: String,
    /// Raw `wait()` status.
    pub exit_status: i32,
    pub max_num_processors: i64,
    pub login_shell: String,
    pub idx: u32,
    /// KB.
    pub max_rmem: i64,
    /// KB.
    pub max_rswap: i64,
    pub in_file_spool: String,
    pub command_spool: String,
    /// Basalt: fields after the mark, kept verbatim.
    pub basalt_extra: Vec<Field>,
    /// IBM LSF records: every field after `loginShell`, verbatim.
    pub foreign_tail: Option<Vec<Field>>,
}

impl Default for JobFinish {
    fn default() -> Self {
        JobFinish {
            header: Header::default(),
            job_id: 0,
            user_id: 0,
            options: 0,
            num_processors: 1,
            submit_time: 0,
            begin_time: 0,
            term_time: 0,
            start_time: 0,
            user_name: String::new(),
            queue: String::new(),
            res_req: String::new(),
            depend_cond: String::new(),
            pre_exec_cmd: String::new(),
            post_exec_cmd: String::new(),
            from_host: String::new(),
            cwd: String::new(),
            in_file: String::new(),
            out_file: String::new(),
            err_file: String::new(),
            job_file: String::new(),
            asked_hosts: Vec::new(),
            exec_hosts: Vec::new(),
            j_status: 0,
            host_factor: 1.0,
            job_name: String::new(),
            command: String::new(),
            rusage: Rusage::default(),
            mail_user: String::new(),
            project_name: String::new(),
            exit_status: 0,
            max_num_processors: 1,
            login_shell: String::new(),
            idx: 0,
            max_rmem: 0,
            max_rswap: 0,
            in_file_spool: String::new(),
            command_spool: String::new(),
            basalt_extra: Vec::new(),
            foreign_tail: None,
        }
    }
}

// The layout common to OpenLava, volclava and IBM LSF, up to `loginShell`.
field_table!(JobFinish :: { parse_common, write_common } |r, d| {
    job_id: int = "jobId";
    user_id: int = "userId";
    options: bits = "options";
    num_processors: int = "numProcessors";
    submit_time: int = "submitTime";
    begin_time: int = "beginTime";
    term_time: int = "termTime";
    start_time: int = "startTime";
    user_name: str = "userName";
    queue: str = "queue";
    res_req: str = "resReq";
    depend_cond: str = "dependCond";
    pre_exec_cmd: str = "preExecCmd";
    post_exec_cmd: str = "postExecCmd",
        if d == Dialect::Volclava && r.options & VOLCLAVA_SUB_POST_EXEC != 0;
    from_host: str = "fromHost";
    cwd: str = "cwd";
    in_file: str = "inFile";
    out_file: str = "outFile";
    err_file: str = "errFile";
    job_file: str = "jobFile";
    asked_hosts: hosts("numAskedHosts") = "askedHosts";
    exec_hosts: hosts("numExHosts") = "execHosts";
    j_status: bits = "jStatus";
    host_factor: f3_1 = "hostFactor";
    job_name: str = "jobName";
    command: str = "command";
    rusage: rusage = "rusage";
    mail_user: str = "mailUser";
    project_name: str = "projectName";
    exit_status: int = "exitStatus";
    max_num_processors: int = "maxNumProcessors";
    login_shell: str = "loginShell";
});

// The OpenLava tail after `loginShell`, every field present: how OpenLava, volclava and
// Basalt records are written and how Basalt's are read (the others' are read while
// present).
field_table!(JobFinish :: { parse_ol_tail, write_ol_tail } |r, d| {
    idx: int = "idx";
    max_rmem: int = "maxRMem";
    max_rswap: int = "maxRSwap";
    in_file_spool: str = "inFileSpool";
    command_spool: str = "commandSpool";
});

impl JobFinish {
    pub(super) fn parse(c: &mut Cursor<'_>, header: Header) -> Result<Self, ParseError> {
        let d = header.dialect();
        let mut j = JobFinish {
            header,
            ..JobFinish::default()
        };
        JobFinish::parse_common(&mut j, d, c)?;
        match d {
            Dialect::OpenLava | Dialect::Volclava => {
                j.idx = c.int("idx")?;
                j.max_rmem = c.opt_int("maxRMem")?.unwrap_or(0);
                j.max_rswap = c.opt_int("maxRSwap")?.unwrap_or(0);
                j.in_file_spool = c.opt_str("inFileSpool")?.unwrap_or_default();
                j.command_spool = c.opt_str("commandSpool")?.unwrap_or_default();
            }
            Dialect::Lsf => {
                let save = *c;
                if j.parse_basalt_tail(c, d).is_err() {
                    *c = save;
                    j.idx = 0;
                    j.max_rmem = 0;
                    j.max_rswap = 0;
                    j.in_file_spool.clear();
                    j.command_spool.clear();
                    j.basalt_extra.clear();
                    j.foreign_tail = Some(c.rest()?);
                }
            }
        }
        Ok(j)
    }

    /// The record as one `lsb.acct` line, without the newline.
    pub fn to_line(&self) -> String {
        let mut s = String::with_capacity(400);
        self.write_line(&mut s);
        s
    }

    /// Append the record's line (without a newline) to `out`.
    pub fn write_line(&self, out: &mut String) {
        self.write("JOB_FINISH", out);
    }

    fn parse_basalt_tail(&mut self, c: &mut Cursor<'_>, d: Dialect) -> Result<(), ParseError> {
        JobFinish::parse_ol_tail(self, d, c)?;
        if c.str("Basalt mark")? != BASALT_MARK {
            return Err(ParseError::new(c.next_index() - 1, "no Basalt mark"));
        }
        self.basalt_extra = c.rest()?;
        Ok(())
    }

    pub(super) fn write(&self, kind: &str, out: &mut String) {
        let d = self.header.dialect();
        let mut w = LineWriter::start(out, kind, &self.header.version, self.header.time);
        JobFinish::write_common(self, d, &mut w);
        if let Some(tail) = &self.foreign_tail {
            w.fields(tail);
            return;
        }
        JobFinish::write_ol_tail(self, d, &mut w);
        if d == Dialect::Lsf {
            w.str(BASALT_MARK).fields(&self.basalt_extra);
        }
    }
}
