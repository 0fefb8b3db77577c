//! `JOB_NEW` and `JOB_MODIFY`: the submitted job, in every dialect's layout.

use basalt_core::job::{sub, sub2};

use super::{BASALT_MARK, Dialect, Field, Header, VOLCLAVA_SUB_POST_EXEC, rlimit};
use crate::error::ParseError;
use crate::field::{Cursor, LineWriter};

/// A `bsub -f` file transfer of `JOB_NEW` (`"subFn" "execFn" options`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct XFile {
    pub sub_fn: String,
    pub exec_fn: String,
    pub options: u32,
}

/// `JOB_NEW` (also `JOB_MODIFY`): a submitted job, everything mbatchd needs to rebuild it.
///
/// Fields up to `login_shell` are the layout common to OpenLava, volclava and IBM LSF
/// (gawk positions `$4` jobId, `$5` userId, `$42` jobName, `$43` command with no asked
/// hosts). What follows depends on the [`Dialect`]:
///
/// * OpenLava: `options2 idx [niosPort] "inFileSpool" "commandSpool" "jobSpoolDir"
///   userPriority "userGroup" abs_run_limit "job_group" ["job_description" when options2
///   has SUB2_JOB_DESC] priority`.
/// * volclava: the same up to `userPriority`, then `"jobDesc" "specifiedCwd"`; and
///   `"postExecCmd"` after `"preExecCmd"` when `options` has [`VOLCLAVA_SUB_POST_EXEC`].
/// * Basalt (dotted version, the OpenLava tail followed by [`BASALT_MARK`]): the OpenLava
///   layout, then `"BASALT" "specifiedCwd" isScript`, then [`JobNew::basalt_extra`].
///   Fields Basalt adds later go after `isScript`; older readers ignore them.
/// * IBM LSF (dotted version without the Basalt mark): LSF inserts and appends fields after
///   `loginShell` that this crate does not model; they are kept verbatim in
///   [`JobNew::foreign_tail`] and the OpenLava tail fields keep their defaults.
///
/// Surplus fields after the known layout are ignored, except in Basalt's dialect where
/// they are kept in `basalt_extra`.
#[derive(Debug, Clone, PartialEq)]
pub struct JobNew {
    pub header: Header,
    pub job_id: u64,
    pub user_id: i64,
    /// `SUB_*` bits (`basalt_core::job::sub`).
    pub options: u32,
    pub num_processors: i64,
    pub submit_time: i64,
    pub begin_time: i64,
    pub term_time: i64,
    pub sig_value: i64,
    pub chkpnt_period: i64,
    pub restart_pid: i64,
    pub user_name: String,
    /// In [`rlimit`] order; `-1` = unlimited. CPU and RUN in seconds, sizes in KB.
    pub rlimits: [i64; rlimit::COUNT],
    pub host_spec: String,
    /// Written `%6.2f`.
    pub host_factor: f64,
    pub umask: i64,
    pub queue: String,
    pub res_req: String,
    pub from_host: String,
    /// The submission directory.
    pub cwd: String,
    pub chkpnt_dir: String,
    pub in_file: String,
    pub out_file: String,
    pub err_file: String,
    pub sub_home_dir: String,
    /// `"<submitTime>.<jobId>"`, the spooled job file's name.
    pub job_file: String,
    /// `-m` hosts.
    pub asked_hosts: Vec<String>,
    pub depend_cond: String,
    pub pre_exec_cmd: String,
    /// volclava only (see [`VOLCLAVA_SUB_POST_EXEC`]); never written in other dialects.
    pub post_exec_cmd: String,
    pub job_name: String,
    /// Newlines are deleted when written (the spooled job file has the real text).
    pub command: String,
    pub xf: Vec<XFile>,
    pub mail_user: String,
    pub project_name: String,
    /// Written after `projectName` when `options` has SUB_INTERACTIVE and after `idx` when
    /// `options2` has SUB2_BSUB_BLOCK.
    pub nios_port: i64,
    pub max_num_processors: i64,
    pub sched_host_type: String,
    pub login_shell: String,
    /// `SUB2_*` bits (`basalt_core::job::sub2`), including Basalt's OUT/ERR_OVERWRITE.
    pub options2: u32,
    pub idx: u32,
    pub in_file_spool: String,
    pub command_spool: String,
    pub job_spool_dir: String,
    pub user_priority: i64,
    /// OpenLava 4 / Basalt: `-G`.
    pub user_group: String,
    /// OpenLava 4 / Basalt.
    pub abs_run_limit: i64,
    /// OpenLava 4 / Basalt: `-g`.
    pub job_group: String,
    /// OpenLava 4 `job_description` (written only with SUB2_JOB_DESC) / volclava `jobDesc`.
    pub job_description: String,
    /// OpenLava 4 / Basalt.
    pub priority: i64,
    /// volclava / Basalt: the `-cwd` value as given (`%J`/`%I` unexpanded), "" = none.
    pub specified_cwd: String,
    /// Basalt: `command` is a script (`bsub < file`), not a command line.
    pub is_script: bool,
    /// Basalt: fields after the ones above (a newer Basalt's additions), kept verbatim.
    pub basalt_extra: Vec<Field>,
    /// IBM LSF records: every field after `loginShell`, verbatim (see the type's docs).
    pub foreign_tail: Option<Vec<Field>>,
}

impl Default for JobNew {
    fn default() -> Self {
        JobNew {
            header: Header::default(),
            job_id: 0,
            user_id: 0,
            options: 0,
            num_processors: 1,
            submit_time: 0,
            begin_time: 0,
            term_time: 0,
            sig_value: 0,
            chkpnt_period: 0,
            restart_pid: 0,
            user_name: String::new(),
            rlimits: [-1; rlimit::COUNT],
            host_spec: String::new(),
            host_factor: 1.0,
            umask: 0o022,
            queue: String::new(),
            res_req: String::new(),
            from_host: String::new(),
            cwd: String::new(),
            chkpnt_dir: String::new(),
            in_file: String::new(),
            out_file: String::new(),
            err_file: String::new(),
            sub_home_dir: String::new(),
            job_file: String::new(),
            asked_hosts: Vec::new(),
            depend_cond: String::new(),
            pre_exec_cmd: String::new(),
            post_exec_cmd: String::new(),
            job_name: String::new(),
            command: String::new(),
            xf: Vec::new(),
            mail_user: String::new(),
            project_name: String::new(),
            nios_port: 0,
            max_num_processors: 1,
            sched_host_type: String::new(),
            login_shell: String::new(),
            options2: 0,
            idx: 0,
            in_file_spool: String::new(),
            command_spool: String::new(),
            job_spool_dir: String::new(),
            user_priority: -1,
            user_group: String::new(),
            abs_run_limit: -1,
            job_group: String::new(),
            job_description: String::new(),
            priority: -1,
            specified_cwd: String::new(),
            is_script: false,
            basalt_extra: Vec::new(),
            foreign_tail: None,
        }
    }
}

// The layout common to OpenLava, volclava and IBM LSF, up to `loginShell`.
field_table!(JobNew :: { parse_common, write_common } |r, d| {
    job_id: int = "jobId";
    user_id: int = "userId";
    options: bits = "options";
    num_processors: int = "numProcessors";
    submit_time: int = "submitTime";
    begin_time: int = "beginTime";
    term_time: int = "termTime";
    sig_value: int = "sigValue";
    chkpnt_period: int = "chkpntPeriod";
    restart_pid: int = "restartPid";
    user_name: str = "userName";
    rlimits: rlimits = "rLimits";
    host_spec: str = "hostSpec";
    host_factor: f6_2 = "hostFactor";
    umask: int = "umask";
    queue: str = "queue";
    res_req: str = "resReq";
    from_host: str = "fromHost";
    cwd: str = "cwd";
    chkpnt_dir: str = "chkpntDir";
    in_file: str = "inFile";
    out_file: str = "outFile";
    err_file: str = "errFile";
    sub_home_dir: str = "subHomeDir";
    job_file: str = "jobFile";
    asked_hosts: hosts("numAskedHosts") = "askedHosts";
    depend_cond: str = "dependCond";
    pre_exec_cmd: str = "preExecCmd";
    post_exec_cmd: str = "postExecCmd",
        if d == Dialect::Volclava && r.options & VOLCLAVA_SUB_POST_EXEC != 0;
    job_name: str = "jobName";
    command: str = "command";
    xf: xf("nxf") = "xf";
    mail_user: str = "mailUser";
    project_name: str = "projectName";
    nios_port: int = "niosPort", if r.options & sub::INTERACTIVE != 0;
    max_num_processors: int = "maxNumProcessors";
    sched_host_type: str = "schedHostType";
    login_shell: str = "loginShell";
});

// The OpenLava 4 tail after `loginShell`, every field present: how OpenLava and Basalt
// records are written and how Basalt's are read (OpenLava's are read while present, by
// `parse_openlava_tail`).
field_table!(JobNew :: { parse_ol4_tail, write_ol4_tail } |r, d| {
    options2: bits = "options2";
    idx: int = "idx";
    nios_port: int = "niosPort", if r.options2 & sub2::BSUB_BLOCK != 0;
    in_file_spool: str = "inFileSpool";
    command_spool: str = "commandSpool";
    job_spool_dir: str = "jobSpoolDir";
    user_priority: int = "userPriority";
    user_group: str = "userGroup";
    abs_run_limit: int = "abs_run_limit";
    job_group: str = "job_group";
    job_description: str = "job_description", if r.options2 & sub2::JOB_DESC != 0;
    priority: int = "priority";
});

impl JobNew {
    pub(super) fn parse(c: &mut Cursor<'_>, header: Header) -> Result<JobNew, ParseError> {
        let d = header.dialect();
        let mut j = JobNew {
            header,
            ..JobNew::default()
        };
        JobNew::parse_common(&mut j, d, c)?;
        match d {
            Dialect::OpenLava | Dialect::Volclava => j.parse_openlava_tail(c, d)?,
            Dialect::Lsf => {
                let save = *c;
                let nios_port = j.nios_port;
                if j.parse_basalt_tail(c, d).is_err() {
                    *c = save;
                    j.reset_tail();
                    j.nios_port = nios_port;
                    j.foreign_tail = Some(c.rest()?);
                }
            }
        }
        Ok(j)
    }

    /// OpenLava / volclava: options2 and idx are required, the rest is read while present.
    fn parse_openlava_tail(&mut self, c: &mut Cursor<'_>, d: Dialect) -> Result<(), ParseError> {
        self.options2 = c.bits("options2")?;
        self.idx = c.int("idx")?;
        if self.options2 & sub2::BSUB_BLOCK != 0 {
            match c.opt_int("niosPort")? {
                Some(p) => self.nios_port = p,
                None => return Ok(()),
            }
        }
        macro_rules! opt {
            ($field:expr, $m:ident, $name:expr) => {
                match c.$m($name)? {
                    Some(v) => $field = v,
                    None => return Ok(()),
                }
            };
        }
        opt!(self.in_file_spool, opt_str, "inFileSpool");
        opt!(self.command_spool, opt_str, "commandSpool");
        opt!(self.job_spool_dir, opt_str, "jobSpoolDir");
        opt!(self.user_priority, opt_int, "userPriority");
        if d == Dialect::Volclava {
            opt!(self.job_description, opt_str, "jobDesc");
            opt!(self.specified_cwd, opt_str, "specifiedCwd");
        } else {
            opt!(self.user_group, opt_str, "userGroup");
            opt!(self.abs_run_limit, opt_int, "abs_run_limit");
            opt!(self.job_group, opt_str, "job_group");
            if self.options2 & sub2::JOB_DESC != 0 {
                opt!(self.job_description, opt_str, "job_description");
            }
            opt!(self.priority, opt_int, "priority");
        }
        Ok(())
    }

    /// Basalt: the full OpenLava 4 tail, the mark, then Basalt's fields. Any mismatch means
    /// the record is not Basalt's.
    fn parse_basalt_tail(&mut self, c: &mut Cursor<'_>, d: Dialect) -> Result<(), ParseError> {
        JobNew::parse_ol4_tail(self, d, c)?;
        if c.str("Basalt mark")? != BASALT_MARK {
            return Err(ParseError::new(c.next_index() - 1, "no Basalt mark"));
        }
        if let Some(s) = c.opt_str("specifiedCwd")? {
            self.specified_cwd = s;
            if let Some(v) = c.opt_int::<i64>("isScript")? {
                self.is_script = v != 0;
                self.basalt_extra = c.rest()?;
            }
        }
        Ok(())
    }

    fn reset_tail(&mut self) {
        let d = JobNew::default();
        self.options2 = d.options2;
        self.idx = d.idx;
        self.in_file_spool = d.in_file_spool;
        self.command_spool = d.command_spool;
        self.job_spool_dir = d.job_spool_dir;
        self.user_priority = d.user_priority;
        self.user_group = d.user_group;
        self.abs_run_limit = d.abs_run_limit;
        self.job_group = d.job_group;
        self.job_description = d.job_description;
        self.priority = d.priority;
        self.specified_cwd = d.specified_cwd;
        self.is_script = d.is_script;
        self.basalt_extra = d.basalt_extra;
    }

    pub(super) fn write(&self, kind: &str, out: &mut String) {
        let d = self.header.dialect();
        let mut w = LineWriter::start(out, kind, &self.header.version, self.header.time);
        JobNew::write_common(self, d, &mut w);
        if let Some(tail) = &self.foreign_tail {
            w.fields(tail);
            return;
        }
        if d == Dialect::Volclava {
            w.bits(self.options2).int(self.idx);
            if self.options2 & sub2::BSUB_BLOCK != 0 {
                w.int(self.nios_port);
            }
            w.str(&self.in_file_spool)
                .str(&self.command_spool)
                .str(&self.job_spool_dir)
                .int(self.user_priority)
                .str(&self.job_description)
                .str(&self.specified_cwd);
            return;
        }
        JobNew::write_ol4_tail(self, d, &mut w);
        if d == Dialect::Lsf {
            w.str(BASALT_MARK)
                .str(&self.specified_cwd)
                .int(i64::from(self.is_script))
                .fields(&self.basalt_extra);
        }
    }
}
