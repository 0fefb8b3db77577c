//! `JOB_MODIFY2`: the changes `bmod` made to a job (OpenLava's `readJobMod` /
//! `writeJobMod` layout), with Basalt's own changes after the Basalt mark.

use basalt_core::job::{sub, sub2};

use super::{BASALT_MARK, Dialect, Field, Header, VOLCLAVA_SUB_POST_EXEC, XFile, rlimit};
use crate::error::ParseError;
use crate::field::{Cursor, LineWriter};

/// The bits of [`JobModify2::basalt_options`] (Basalt's `bmod` options that LSF's
/// `options`/`delOptions` have no bit for), and LSF's special values of a
/// `JOB_MODIFY2` record (`lsbatch.h`).
///
/// Each Basalt option has a "set" bit (the new value is in the named field) and a
/// "delete" bit (the `-xxxn` form: back to the default, the field is empty).
pub mod modify {
    /// `bmod -Ep cmd`: the post-execution command is [`post_exec_cmd`](super::JobModify2::post_exec_cmd).
    pub const POST_EXEC: u32 = 0x1;
    /// `bmod -Epn`: no post-execution command.
    pub const POST_EXEC_DEL: u32 = 0x2;
    /// `bmod -Q "..."`: the requeue exit values are
    /// [`requeue_exit_values`](super::JobModify2::requeue_exit_values).
    pub const REQUEUE: u32 = 0x4;
    /// `bmod -Qn`: no requeue exit values of the job's own.
    pub const REQUEUE_DEL: u32 = 0x8;
    /// `bmod -app name`: the application profile is [`app`](super::JobModify2::app).
    pub const APP: u32 = 0x10;
    /// `bmod -appn`: back to the default application profile.
    pub const APP_DEL: u32 = 0x20;
    /// `bmod -cwd dir`: the working directory is
    /// [`specified_cwd`](super::JobModify2::specified_cwd).
    pub const CWD: u32 = 0x40;
    /// `bmod -cwdn`: back to the submission directory.
    pub const CWD_DEL: u32 = 0x80;
    /// `bmod -G group`: the user group is [`user_group`](super::JobModify2::user_group).
    pub const USER_GROUP: u32 = 0x100;
    /// `bmod -Gn`: no user group.
    pub const USER_GROUP_DEL: u32 = 0x200;

    /// `numProcessors` / `maxNumProcessors` not changed (`DEFAULT_NUMPRO`,
    /// `INFINIT_INT - 1`): what LSF and OpenLava write when `-n` is not given.
    pub const DEFAULT_NUMPRO: i64 = 2_147_483_646;
    /// `numProcessors` / `maxNumProcessors` back to the default (`bmod -nn`;
    /// `DEL_NUMPRO`, `INFINIT_INT`).
    pub const DEL_NUMPRO: i64 = 2_147_483_647;
    /// A limit, `beginTime` or `termTime` back to the default (`bmod -Wn`, `-bn`, `-tn`,
    /// ...; `DELETE_NUMBER`).
    pub const DELETE_NUMBER: i64 = -2;
}

/// `JOB_MODIFY2`: what `bmod` changed in a job. Only the fields whose option bit is set
/// (in `options`, `options2` or, for Basalt's own, `basalt_options`) are changes; the
/// `del_options`/`del_options2` bits (and [`modify`]'s `*_DEL` bits) name what was set
/// back to its default (`bmod -qn`, `-on`, ...).
///
/// Layout (OpenLava's `lsb.log.c`): `"jobIdStr" options options2 delOptions userId
/// "userName" submitTime umask numProcessors beginTime termTime sigValue restartPid`, then
/// `"jobName"` (SUB_JOB_NAME), `"queue"` (SUB_QUEUE), `numAskedHosts "host"...`
/// (SUB_HOST), `"resReq"` (SUB_RES_REQ), `rLimits×11`, `"hostSpec"` (SUB_HOST_SPEC),
/// `"dependCond"` (SUB_DEPEND_COND), `"subHomeDir"`, `"inFile"` (SUB_IN_FILE or
/// SUB2_IN_FILE_SPOOL), `"outFile"`, `"errFile"`, `"command"` (SUB2_MODIFY_CMD),
/// `chkpntPeriod`, `"chkpntDir"`, `nxf xf...` (SUB_OTHER_FILES), `"jobFile" "fromHost"
/// "cwd"`, `"preExecCmd"`, `"mailUser"`, `"projectName"`, `niosPort maxNumProcessors`,
/// `"loginShell"`, `"schedHostType" delOptions2`, `"inFileSpool"` (SUB2_IN_FILE_SPOOL),
/// `"commandSpool"` (SUB2_JOB_CMD_SPOOL), `userPriority` (SUB2_JOB_PRIORITY). What
/// follows depends on the [`Dialect`]:
///
/// * OpenLava: nothing more; surplus fields are ignored.
/// * volclava: `"postExecCmd"` after `"preExecCmd"` when `options` has
///   [`VOLCLAVA_SUB_POST_EXEC`] (read into `post_exec_cmd`, written back in place);
///   surplus fields (volclava 2.2's `"jobDesc"`) are ignored.
/// * Basalt (dotted version): the layout above, then [`BASALT_MARK`], then
///   `basaltOptions "postExecCmd" "requeueExitValues" "app" "specifiedCwd" "userGroup"`
///   (the five strings always written, empty when unused), then
///   [`JobModify2::basalt_extra`].
/// * IBM LSF (a dotted version without the Basalt mark): LSF's layout is not modelled;
///   [`parse_line`](super::parse_line) keeps such a record as
///   [`Record::Unknown`](super::Record::Unknown), verbatim.
///
/// Values meaning "unchanged": `-1` limits (`-2`, [`modify::DELETE_NUMBER`], = back to
/// the default), `0` beginTime/termTime (`-2` = removed), [`modify::DEFAULT_NUMPRO`] (or
/// `0`) processors ([`modify::DEL_NUMPRO`] = back to the default).
#[derive(Debug, Clone, PartialEq)]
pub struct JobModify2 {
    pub header: Header,
    /// The job as `bmod` named it: `"103"`, `"103[3]"` (one element) or `"103[1-5]"`
    /// (several); see [`JobModify2::job_key`].
    pub job_id_str: String,
    /// `SUB_*` bits (`basalt_core::job::sub`) of the fields changed.
    pub options: u32,
    /// `SUB2_*` bits (`basalt_core::job::sub2`) of the fields changed.
    pub options2: u32,
    /// `SUB_*` bits of the fields set back to their defaults (`bmod -qn`, ...).
    pub del_options: u32,
    /// The user who ran `bmod`.
    pub user_id: i64,
    pub user_name: String,
    pub submit_time: i64,
    pub umask: i64,
    /// `-n min`; [`modify::DEFAULT_NUMPRO`] (LSF) or 0 = unchanged,
    /// [`modify::DEL_NUMPRO`] = back to the default.
    pub num_processors: i64,
    /// `-b`; 0 = unchanged, [`modify::DELETE_NUMBER`] = removed.
    pub begin_time: i64,
    /// `-t`; 0 = unchanged, [`modify::DELETE_NUMBER`] = removed.
    pub term_time: i64,
    pub sig_value: i64,
    pub restart_pid: i64,
    /// SUB_JOB_NAME.
    pub job_name: String,
    /// SUB_QUEUE.
    pub queue: String,
    /// SUB_HOST (`-m`).
    pub asked_hosts: Vec<String>,
    /// SUB_RES_REQ.
    pub res_req: String,
    /// In [`rlimit`] order (CPU and RUN in seconds, sizes in KB); `-1` = unchanged,
    /// [`modify::DELETE_NUMBER`] = back to the default.
    pub rlimits: [i64; rlimit::COUNT],
    /// SUB_HOST_SPEC.
    pub host_spec: String,
    /// SUB_DEPEND_COND.
    pub depend_cond: String,
    pub sub_home_dir: String,
    /// SUB_IN_FILE (or SUB2_IN_FILE_SPOOL).
    pub in_file: String,
    /// SUB_OUT_FILE.
    pub out_file: String,
    /// SUB_ERR_FILE.
    pub err_file: String,
    /// SUB2_MODIFY_CMD.
    pub command: String,
    /// SUB_CHKPNT_PERIOD.
    pub chkpnt_period: i64,
    /// SUB_CHKPNT_DIR.
    pub chkpnt_dir: String,
    /// SUB_OTHER_FILES (`-f`).
    pub xf: Vec<XFile>,
    pub job_file: String,
    pub from_host: String,
    pub cwd: String,
    /// SUB_PRE_EXEC.
    pub pre_exec_cmd: String,
    /// SUB_MAIL_USER.
    pub mail_user: String,
    /// SUB_PROJECT_NAME.
    pub project_name: String,
    pub nios_port: i64,
    /// `-n ...,max`; unchanged / deleted as `num_processors`.
    pub max_num_processors: i64,
    /// SUB_LOGIN_SHELL.
    pub login_shell: String,
    pub sched_host_type: String,
    /// `SUB2_*` bits of the fields set back to their defaults.
    pub del_options2: u32,
    /// SUB2_IN_FILE_SPOOL.
    pub in_file_spool: String,
    /// SUB2_JOB_CMD_SPOOL.
    pub command_spool: String,
    /// SUB2_JOB_PRIORITY (`-sp`); -1 when not written.
    pub user_priority: i64,
    /// Basalt: [`modify`] bits.
    pub basalt_options: u32,
    /// Basalt: `-Ep` ([`modify::POST_EXEC`]); volclava: `-Ep` (with
    /// [`VOLCLAVA_SUB_POST_EXEC`] in `options`).
    pub post_exec_cmd: String,
    /// Basalt: `-Q` ([`modify::REQUEUE`]).
    pub requeue_exit_values: String,
    /// Basalt: `-app` ([`modify::APP`]).
    pub app: String,
    /// Basalt: `-cwd`, as given ([`modify::CWD`]).
    pub specified_cwd: String,
    /// Basalt: `-G` ([`modify::USER_GROUP`]).
    pub user_group: String,
    /// Basalt: fields after the ones above (a newer Basalt's additions), kept verbatim.
    pub basalt_extra: Vec<Field>,
}

impl Default for JobModify2 {
    /// A record that changes nothing: limits `-1`, processors
    /// [`modify::DEFAULT_NUMPRO`], times 0, no option bits.
    fn default() -> Self {
        JobModify2 {
            header: Header::default(),
            job_id_str: String::new(),
            options: 0,
            options2: 0,
            del_options: 0,
            user_id: 0,
            user_name: String::new(),
            submit_time: 0,
            umask: 0o022,
            num_processors: modify::DEFAULT_NUMPRO,
            begin_time: 0,
            term_time: 0,
            sig_value: 0,
            restart_pid: 0,
            job_name: String::new(),
            queue: String::new(),
            asked_hosts: Vec::new(),
            res_req: String::new(),
            rlimits: [-1; rlimit::COUNT],
            host_spec: String::new(),
            depend_cond: String::new(),
            sub_home_dir: String::new(),
            in_file: String::new(),
            out_file: String::new(),
            err_file: String::new(),
            command: String::new(),
            chkpnt_period: 0,
            chkpnt_dir: String::new(),
            xf: Vec::new(),
            job_file: String::new(),
            from_host: String::new(),
            cwd: String::new(),
            pre_exec_cmd: String::new(),
            mail_user: String::new(),
            project_name: String::new(),
            nios_port: 0,
            max_num_processors: modify::DEFAULT_NUMPRO,
            login_shell: String::new(),
            sched_host_type: String::new(),
            del_options2: 0,
            in_file_spool: String::new(),
            command_spool: String::new(),
            user_priority: -1,
            basalt_options: 0,
            post_exec_cmd: String::new(),
            requeue_exit_values: String::new(),
            app: String::new(),
            specified_cwd: String::new(),
            user_group: String::new(),
            basalt_extra: Vec::new(),
        }
    }
}

// OpenLava's layout (every dialect), with volclava's postExecCmd.
field_table!(JobModify2 :: { parse_ol, write_ol } |r, d| {
    job_id_str: str = "jobIdStr";
    options: bits = "options";
    options2: bits = "options2";
    del_options: bits = "delOptions";
    user_id: int = "userId";
    user_name: str = "userName";
    submit_time: int = "submitTime";
    umask: int = "umask";
    num_processors: int = "numProcessors";
    begin_time: int = "beginTime";
    term_time: int = "termTime";
    sig_value: int = "sigValue";
    restart_pid: int = "restartPid";
    job_name: str = "jobName", if r.options & sub::JOB_NAME != 0;
    queue: str = "queue", if r.options & sub::QUEUE != 0;
    asked_hosts: hosts("numAskedHosts") = "askedHosts", if r.options & sub::HOST != 0;
    res_req: str = "resReq", if r.options & sub::RES_REQ != 0;
    rlimits: rlimits = "rLimits";
    host_spec: str = "hostSpec", if r.options & sub::HOST_SPEC != 0;
    depend_cond: str = "dependCond", if r.options & sub::DEPEND_COND != 0;
    sub_home_dir: str = "subHomeDir";
    in_file: str = "inFile",
        if r.options & sub::IN_FILE != 0 || r.options2 & sub2::IN_FILE_SPOOL != 0;
    out_file: str = "outFile", if r.options & sub::OUT_FILE != 0;
    err_file: str = "errFile", if r.options & sub::ERR_FILE != 0;
    command: str = "command", if r.options2 & sub2::MODIFY_CMD != 0;
    chkpnt_period: int = "chkpntPeriod", if r.options & sub::CHKPNT_PERIOD != 0;
    chkpnt_dir: str = "chkpntDir", if r.options & sub::CHKPNT_DIR != 0;
    xf: xf("nxf") = "xf", if r.options & sub::OTHER_FILES != 0;
    job_file: str = "jobFile";
    from_host: str = "fromHost";
    cwd: str = "cwd";
    pre_exec_cmd: str = "preExecCmd", if r.options & sub::PRE_EXEC != 0;
    post_exec_cmd: str = "postExecCmd",
        if d == Dialect::Volclava && r.options & VOLCLAVA_SUB_POST_EXEC != 0;
    mail_user: str = "mailUser", if r.options & sub::MAIL_USER != 0;
    project_name: str = "projectName", if r.options & sub::PROJECT_NAME != 0;
    nios_port: int = "niosPort";
    max_num_processors: int = "maxNumProcessors";
    login_shell: str = "loginShell", if r.options & sub::LOGIN_SHELL != 0;
    sched_host_type: str = "schedHostType";
    del_options2: bits = "delOptions2";
    in_file_spool: str = "inFileSpool", if r.options2 & sub2::IN_FILE_SPOOL != 0;
    command_spool: str = "commandSpool", if r.options2 & sub2::JOB_CMD_SPOOL != 0;
    user_priority: int = "userPriority", if r.options2 & sub2::JOB_PRIORITY != 0;
});

impl JobModify2 {
    /// Parse the fields after the header. A dotted-version record must carry the Basalt
    /// mark after the OpenLava layout; [`parse_line`](super::parse_line) keeps one that
    /// does not (IBM LSF's) as `Record::Unknown`.
    pub(super) fn parse(c: &mut Cursor<'_>, header: Header) -> Result<JobModify2, ParseError> {
        let d = header.dialect();
        let mut r = JobModify2 {
            header,
            ..JobModify2::default()
        };
        JobModify2::parse_ol(&mut r, d, c)?;
        if d == Dialect::Lsf {
            r.parse_basalt_tail(c)?;
        }
        Ok(r)
    }

    /// Basalt: the mark, then Basalt's fields, read while present.
    fn parse_basalt_tail(&mut self, c: &mut Cursor<'_>) -> Result<(), ParseError> {
        if c.str("Basalt mark")? != BASALT_MARK {
            return Err(ParseError::new(c.next_index() - 1, "no Basalt mark"));
        }
        macro_rules! opt {
            ($field:expr, $m:ident, $name:expr) => {
                match c.$m($name)? {
                    Some(v) => $field = v,
                    None => return Ok(()),
                }
            };
        }
        opt!(self.basalt_options, opt_bits, "basaltOptions");
        opt!(self.post_exec_cmd, opt_str, "postExecCmd");
        opt!(self.requeue_exit_values, opt_str, "requeueExitValues");
        opt!(self.app, opt_str, "app");
        opt!(self.specified_cwd, opt_str, "specifiedCwd");
        opt!(self.user_group, opt_str, "userGroup");
        self.basalt_extra = c.rest()?;
        Ok(())
    }

    pub(super) fn write(&self, kind: &str, out: &mut String) {
        let d = self.header.dialect();
        let mut w = LineWriter::start(out, kind, &self.header.version, self.header.time);
        JobModify2::write_ol(self, d, &mut w);
        if d == Dialect::Lsf {
            w.str(BASALT_MARK)
                .bits(self.basalt_options)
                .str(&self.post_exec_cmd)
                .str(&self.requeue_exit_values)
                .str(&self.app)
                .str(&self.specified_cwd)
                .str(&self.user_group)
                .fields(&self.basalt_extra);
        }
    }

    /// The job and array index `job_id_str` names: `"103"` → `(103, 0)`, `"103[3]"` →
    /// `(103, 3)`. Several elements (`"103[1-5]"`, `"103[1,3]"`) give index 0, the whole
    /// job, as do other texts after the number. `None` when it does not start with a
    /// number. (The job id agrees with the index scanner's `line_job_id`.)
    pub fn job_key(&self) -> Option<(u64, u32)> {
        let s = self.job_id_str.as_str();
        let end = s
            .bytes()
            .position(|b| !b.is_ascii_digit())
            .unwrap_or(s.len());
        let id: u64 = s[..end].parse().ok()?;
        let idx = s[end..]
            .strip_prefix('[')
            .and_then(|r| r.strip_suffix(']'))
            .and_then(|n| n.parse::<u32>().ok())
            .unwrap_or(0);
        Some((id, idx))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(s: &str) -> Option<(u64, u32)> {
        JobModify2 {
            job_id_str: s.into(),
            ..JobModify2::default()
        }
        .job_key()
    }

    #[test]
    fn job_keys() {
        assert_eq!(key("103"), Some((103, 0)));
        assert_eq!(key("103[3]"), Some((103, 3)));
        assert_eq!(key("103[1-3]"), Some((103, 0)));
        assert_eq!(key("103[1,3]"), Some((103, 0)));
        assert_eq!(key("103[]"), Some((103, 0)));
        assert_eq!(key(""), None);
        assert_eq!(key("[3]"), None);
        assert_eq!(key("x103"), None);
    }
}
