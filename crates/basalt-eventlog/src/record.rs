//! The records of `lsb.events` and `lsb.acct` (event-log.md §3): one struct per record
//! type, in the spec's field order, with its parser and writer.

use basalt_core::job::{sub, sub2};

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

/// The 19 resource-usage values of `JOB_STATUS` and `JOB_FINISH` (event-log.md §4.4):
/// times in seconds, sizes in KB, `-1` when unknown (the default).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rusage {
    pub utime: f64,
    pub stime: f64,
    pub maxrss: f64,
    pub ixrss: f64,
    pub ismrss: f64,
    pub idrss: f64,
    pub isrss: f64,
    pub minflt: f64,
    pub majflt: f64,
    pub nswap: f64,
    pub inblock: f64,
    pub oublock: f64,
    pub ioch: f64,
    pub msgsnd: f64,
    pub msgrcv: f64,
    pub nsignals: f64,
    pub nvcsw: f64,
    pub nivcsw: f64,
    pub exutime: f64,
}

impl Default for Rusage {
    fn default() -> Self {
        Rusage::from_array([-1.0; 19])
    }
}

impl Rusage {
    /// The field names, in record order.
    pub const NAMES: [&'static str; 19] = [
        "ru_utime",
        "ru_stime",
        "ru_maxrss",
        "ru_ixrss",
        "ru_ismrss",
        "ru_idrss",
        "ru_isrss",
        "ru_minflt",
        "ru_majflt",
        "ru_nswap",
        "ru_inblock",
        "ru_oublock",
        "ru_ioch",
        "ru_msgsnd",
        "ru_msgrcv",
        "ru_nsignals",
        "ru_nvcsw",
        "ru_nivcsw",
        "ru_exutime",
    ];

    /// The values in record order.
    pub fn to_array(&self) -> [f64; 19] {
        [
            self.utime,
            self.stime,
            self.maxrss,
            self.ixrss,
            self.ismrss,
            self.idrss,
            self.isrss,
            self.minflt,
            self.majflt,
            self.nswap,
            self.inblock,
            self.oublock,
            self.ioch,
            self.msgsnd,
            self.msgrcv,
            self.nsignals,
            self.nvcsw,
            self.nivcsw,
            self.exutime,
        ]
    }

    /// From values in record order.
    pub fn from_array(a: [f64; 19]) -> Rusage {
        Rusage {
            utime: a[0],
            stime: a[1],
            maxrss: a[2],
            ixrss: a[3],
            ismrss: a[4],
            idrss: a[5],
            isrss: a[6],
            minflt: a[7],
            majflt: a[8],
            nswap: a[9],
            inblock: a[10],
            oublock: a[11],
            ioch: a[12],
            msgsnd: a[13],
            msgrcv: a[14],
            nsignals: a[15],
            nvcsw: a[16],
            nivcsw: a[17],
            exutime: a[18],
        }
    }

    /// CPU time (user + system), 0 when unknown.
    pub fn cpu_time(&self) -> f64 {
        (self.utime.max(0.0)) + (self.stime.max(0.0))
    }

    fn parse(c: &mut Cursor<'_>) -> Result<Rusage, ParseError> {
        let mut a = [0.0; 19];
        for (v, name) in a.iter_mut().zip(Rusage::NAMES) {
            *v = c.float(name)?;
        }
        Ok(Rusage::from_array(a))
    }

    fn write(&self, w: &mut LineWriter<'_>) {
        for (i, v) in self.to_array().into_iter().enumerate() {
            w.ru(v, i < 2);
        }
    }
}

/// A `bsub -f` file transfer of `JOB_NEW` (`"subFn" "execFn" options`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct XFile {
    pub sub_fn: String,
    pub exec_fn: String,
    pub options: u32,
}

// ------------------------------------------------------------------------------ JOB_NEW

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

impl JobNew {
    fn parse(c: &mut Cursor<'_>, header: Header) -> Result<JobNew, ParseError> {
        let d = header.dialect();
        let mut j = JobNew {
            header,
            ..JobNew::default()
        };
        j.job_id = c.int("jobId")?;
        j.user_id = c.int("userId")?;
        j.options = c.bits("options")?;
        j.num_processors = c.int("numProcessors")?;
        j.submit_time = c.int("submitTime")?;
        j.begin_time = c.int("beginTime")?;
        j.term_time = c.int("termTime")?;
        j.sig_value = c.int("sigValue")?;
        j.chkpnt_period = c.int("chkpntPeriod")?;
        j.restart_pid = c.int("restartPid")?;
        j.user_name = c.str("userName")?;
        for (v, name) in j.rlimits.iter_mut().zip(rlimit::NAMES) {
            *v = c.int(name)?;
        }
        j.host_spec = c.str("hostSpec")?;
        j.host_factor = c.float("hostFactor")?;
        j.umask = c.int("umask")?;
        j.queue = c.str("queue")?;
        j.res_req = c.str("resReq")?;
        j.from_host = c.str("fromHost")?;
        j.cwd = c.str("cwd")?;
        j.chkpnt_dir = c.str("chkpntDir")?;
        j.in_file = c.str("inFile")?;
        j.out_file = c.str("outFile")?;
        j.err_file = c.str("errFile")?;
        j.sub_home_dir = c.str("subHomeDir")?;
        j.job_file = c.str("jobFile")?;
        let n: i64 = c.int("numAskedHosts")?;
        j.asked_hosts = c.hosts(n, "askedHosts")?;
        j.depend_cond = c.str("dependCond")?;
        j.pre_exec_cmd = c.str("preExecCmd")?;
        if d == Dialect::Volclava && j.options & VOLCLAVA_SUB_POST_EXEC != 0 {
            j.post_exec_cmd = c.str("postExecCmd")?;
        }
        j.job_name = c.str("jobName")?;
        j.command = c.str("command")?;
        let nxf: i64 = c.int("nxf")?;
        for _ in 0..nxf.max(0) {
            j.xf.push(XFile {
                sub_fn: c.str("xf.subFn")?,
                exec_fn: c.str("xf.execFn")?,
                options: c.bits("xf.options")?,
            });
        }
        j.mail_user = c.str("mailUser")?;
        j.project_name = c.str("projectName")?;
        if j.options & sub::INTERACTIVE != 0 {
            j.nios_port = c.int("niosPort")?;
        }
        j.max_num_processors = c.int("maxNumProcessors")?;
        j.sched_host_type = c.str("schedHostType")?;
        j.login_shell = c.str("loginShell")?;
        match d {
            Dialect::OpenLava | Dialect::Volclava => j.parse_openlava_tail(c, d)?,
            Dialect::Lsf => {
                let save = *c;
                let nios_port = j.nios_port;
                if j.parse_basalt_tail(c).is_err() {
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
    fn parse_basalt_tail(&mut self, c: &mut Cursor<'_>) -> Result<(), ParseError> {
        self.options2 = c.bits("options2")?;
        self.idx = c.int("idx")?;
        if self.options2 & sub2::BSUB_BLOCK != 0 {
            self.nios_port = c.int("niosPort")?;
        }
        self.in_file_spool = c.str("inFileSpool")?;
        self.command_spool = c.str("commandSpool")?;
        self.job_spool_dir = c.str("jobSpoolDir")?;
        self.user_priority = c.int("userPriority")?;
        self.user_group = c.str("userGroup")?;
        self.abs_run_limit = c.int("abs_run_limit")?;
        self.job_group = c.str("job_group")?;
        if self.options2 & sub2::JOB_DESC != 0 {
            self.job_description = c.str("job_description")?;
        }
        self.priority = c.int("priority")?;
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

    fn write(&self, kind: &str, out: &mut String) {
        let d = self.header.dialect();
        let mut w = LineWriter::start(out, kind, &self.header.version, self.header.time);
        w.int(self.job_id)
            .int(self.user_id)
            .bits(self.options)
            .int(self.num_processors)
            .int(self.submit_time)
            .int(self.begin_time)
            .int(self.term_time)
            .int(self.sig_value)
            .int(self.chkpnt_period)
            .int(self.restart_pid)
            .str(&self.user_name);
        for v in self.rlimits {
            w.int(v);
        }
        w.str(&self.host_spec)
            .f6_2(self.host_factor)
            .int(self.umask)
            .str(&self.queue)
            .str(&self.res_req)
            .str(&self.from_host)
            .str(&self.cwd)
            .str(&self.chkpnt_dir)
            .str(&self.in_file)
            .str(&self.out_file)
            .str(&self.err_file)
            .str(&self.sub_home_dir)
            .str(&self.job_file)
            .hosts(&self.asked_hosts)
            .str(&self.depend_cond)
            .str(&self.pre_exec_cmd);
        if d == Dialect::Volclava && self.options & VOLCLAVA_SUB_POST_EXEC != 0 {
            w.str(&self.post_exec_cmd);
        }
        w.str(&self.job_name).str(&self.command).int(self.xf.len());
        for x in &self.xf {
            w.str(&x.sub_fn).str(&x.exec_fn).bits(x.options);
        }
        w.str(&self.mail_user).str(&self.project_name);
        if self.options & sub::INTERACTIVE != 0 {
            w.int(self.nios_port);
        }
        w.int(self.max_num_processors)
            .str(&self.sched_host_type)
            .str(&self.login_shell);
        if let Some(tail) = &self.foreign_tail {
            w.fields(tail);
            return;
        }
        w.bits(self.options2).int(self.idx);
        if self.options2 & sub2::BSUB_BLOCK != 0 {
            w.int(self.nios_port);
        }
        w.str(&self.in_file_spool)
            .str(&self.command_spool)
            .str(&self.job_spool_dir)
            .int(self.user_priority);
        if d == Dialect::Volclava {
            w.str(&self.job_description).str(&self.specified_cwd);
            return;
        }
        w.str(&self.user_group)
            .int(self.abs_run_limit)
            .str(&self.job_group);
        if self.options2 & sub2::JOB_DESC != 0 {
            w.str(&self.job_description);
        }
        w.int(self.priority);
        if d == Dialect::Lsf {
            w.str(BASALT_MARK)
                .str(&self.specified_cwd)
                .int(i64::from(self.is_script))
                .fields(&self.basalt_extra);
        }
    }
}

// ---------------------------------------------------------------------------- JOB_START

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

impl JobStart {
    fn parse(c: &mut Cursor<'_>, header: Header) -> Result<JobStart, ParseError> {
        let d = header.dialect();
        let mut j = JobStart {
            header,
            job_id: c.int("jobId")?,
            j_status: c.bits("jStatus")?,
            job_pid: c.int("jobPid")?,
            job_pgid: c.int("jobPGid")?,
            host_factor: c.float("hostFactor")?,
            ..JobStart::default()
        };
        let n: i64 = c.int("numExHosts")?;
        j.exec_hosts = c.hosts(n, "execHosts")?;
        j.queue_pre_cmd = c.str("queuePreCmd")?;
        j.queue_post_cmd = c.str("queuePostCmd")?;
        j.j_flags = c.bits("jFlags")?;
        j.idx = c.int("idx")?;
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

    fn write(&self, kind: &str, out: &mut String) {
        let mut w = LineWriter::start(out, kind, &self.header.version, self.header.time);
        w.int(self.job_id)
            .bits(self.j_status)
            .int(self.job_pid)
            .int(self.job_pgid)
            .f3_1(self.host_factor)
            .hosts(&self.exec_hosts)
            .str(&self.queue_pre_cmd)
            .str(&self.queue_post_cmd)
            .bits(self.j_flags)
            .int(self.idx);
        match self.header.dialect() {
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

impl JobStartAccept {
    fn parse(c: &mut Cursor<'_>, header: Header) -> Result<Self, ParseError> {
        Ok(JobStartAccept {
            header,
            job_id: c.int("jobId")?,
            job_pid: c.int("jobPid")?,
            job_pgid: c.int("jobPGid")?,
            idx: c.int("idx")?,
            j_flags: c.opt_bits("jFlags")?.unwrap_or(0),
        })
    }

    fn write(&self, kind: &str, out: &mut String) {
        let mut w = LineWriter::start(out, kind, &self.header.version, self.header.time);
        w.int(self.job_id)
            .int(self.job_pid)
            .int(self.job_pgid)
            .int(self.idx);
        if self.header.dialect() != Dialect::Volclava {
            w.bits(self.j_flags);
        }
    }
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

impl JobExecute {
    fn parse(c: &mut Cursor<'_>, header: Header) -> Result<Self, ParseError> {
        Ok(JobExecute {
            header,
            job_id: c.int("jobId")?,
            exec_uid: c.int("execUid")?,
            job_pgid: c.int("jobPGid")?,
            exec_cwd: c.str("execCwd")?,
            exec_home: c.str("execHome")?,
            exec_username: c.str("execUsername")?,
            job_pid: c.int("jobPid")?,
            idx: c.int("idx")?,
        })
    }

    fn write(&self, kind: &str, out: &mut String) {
        LineWriter::start(out, kind, &self.header.version, self.header.time)
            .int(self.job_id)
            .int(self.exec_uid)
            .int(self.job_pgid)
            .str(&self.exec_cwd)
            .str(&self.exec_home)
            .str(&self.exec_username)
            .int(self.job_pid)
            .int(self.idx);
    }
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

impl JobStatus {
    fn parse(c: &mut Cursor<'_>, header: Header) -> Result<Self, ParseError> {
        let mut j = JobStatus {
            header,
            job_id: c.int("jobId")?,
            j_status: c.bits("jStatus")?,
            reason: c.bits("reason")?,
            subreasons: c.bits("subreasons")?,
            cpu_time: c.float("cpuTime")?,
            end_time: c.int("endTime")?,
            ..JobStatus::default()
        };
        let ru: i64 = c.int("ru")?;
        if ru != 0 {
            j.rusage = Some(Rusage::parse(c)?);
        }
        j.exit_status = c.int("exitStatus")?;
        j.idx = c.int("idx")?;
        if j.header.dialect() == Dialect::Lsf {
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

    fn write(&self, kind: &str, out: &mut String) {
        let mut w = LineWriter::start(out, kind, &self.header.version, self.header.time);
        w.int(self.job_id)
            .bits(self.j_status)
            .bits(self.reason)
            .bits(self.subreasons)
            .f4_4(self.cpu_time)
            .int(self.end_time);
        match &self.rusage {
            Some(ru) => {
                w.int(1);
                ru.write(&mut w);
            }
            None => {
                w.int(0);
            }
        }
        w.int(self.exit_status).int(self.idx);
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

impl JobSignal {
    fn parse(c: &mut Cursor<'_>, header: Header) -> Result<Self, ParseError> {
        Ok(JobSignal {
            header,
            job_id: c.int("jobId")?,
            user_id: c.int("userId")?,
            run_count: c.int("runCount")?,
            signal_symbol: c.str("signalSymbol")?,
            idx: c.int("idx")?,
            user_name: c.str("userName")?,
        })
    }

    fn write(&self, kind: &str, out: &mut String) {
        LineWriter::start(out, kind, &self.header.version, self.header.time)
            .int(self.job_id)
            .int(self.user_id)
            .int(self.run_count)
            .str(&self.signal_symbol)
            .int(self.idx)
            .str(&self.user_name);
    }
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

impl JobSwitch {
    fn parse(c: &mut Cursor<'_>, header: Header) -> Result<Self, ParseError> {
        Ok(JobSwitch {
            header,
            user_id: c.int("userId")?,
            job_id: c.int("jobId")?,
            queue: c.str("queue")?,
            idx: c.int("idx")?,
            user_name: c.str("userName")?,
        })
    }

    fn write(&self, kind: &str, out: &mut String) {
        LineWriter::start(out, kind, &self.header.version, self.header.time)
            .int(self.user_id)
            .int(self.job_id)
            .str(&self.queue)
            .int(self.idx)
            .str(&self.user_name);
    }
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

impl JobMove {
    fn parse(c: &mut Cursor<'_>, header: Header) -> Result<Self, ParseError> {
        Ok(JobMove {
            header,
            user_id: c.int("userId")?,
            job_id: c.int("jobId")?,
            position: c.int("position")?,
            base: c.int("base")?,
            idx: c.int("idx")?,
            user_name: c.str("userName")?,
        })
    }

    fn write(&self, kind: &str, out: &mut String) {
        LineWriter::start(out, kind, &self.header.version, self.header.time)
            .int(self.user_id)
            .int(self.job_id)
            .int(self.position)
            .int(self.base)
            .int(self.idx)
            .str(&self.user_name);
    }
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

fn parse_job_idx(c: &mut Cursor<'_>) -> Result<(u64, u32), ParseError> {
    Ok((c.int("jobId")?, c.int("idx")?))
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

impl JobForce {
    fn parse(c: &mut Cursor<'_>, header: Header) -> Result<Self, ParseError> {
        let job_id = c.int("jobId")?;
        let user_id = c.int("userId")?;
        let idx = c.int("idx")?;
        let options = c.bits("options")?;
        let n: i64 = c.int("numExecHosts")?;
        Ok(JobForce {
            header,
            job_id,
            user_id,
            idx,
            options,
            exec_hosts: c.hosts(n, "execHosts")?,
            user_name: c.str("userName")?,
        })
    }

    fn write(&self, kind: &str, out: &mut String) {
        LineWriter::start(out, kind, &self.header.version, self.header.time)
            .int(self.job_id)
            .int(self.user_id)
            .int(self.idx)
            .bits(self.options)
            .hosts(&self.exec_hosts)
            .str(&self.user_name);
    }
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

impl JobSigact {
    fn parse(c: &mut Cursor<'_>, header: Header) -> Result<Self, ParseError> {
        Ok(JobSigact {
            header,
            job_id: c.int("jobId")?,
            period: c.int("period")?,
            pid: c.int("pid")?,
            j_status: c.bits("jStatus")?,
            reasons: c.bits("reasons")?,
            flags: c.int("flags")?,
            act_status: c.int("actStatus")?,
            signal_symbol: c.str("signalSymbol")?,
            idx: c.int("idx")?,
        })
    }

    fn write(&self, kind: &str, out: &mut String) {
        LineWriter::start(out, kind, &self.header.version, self.header.time)
            .int(self.job_id)
            .int(self.period)
            .int(self.pid)
            .bits(self.j_status)
            .bits(self.reasons)
            .int(self.flags)
            .int(self.act_status)
            .str(&self.signal_symbol)
            .int(self.idx);
    }
}

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

/// `(opCode, name, userId, userName, message)` of QUEUE_CTRL / HOST_CTRL.
type CtrlFields = (i64, String, i64, String, String);

fn parse_ctrl(c: &mut Cursor<'_>, what: &str) -> Result<CtrlFields, ParseError> {
    Ok((
        c.int("opCode")?,
        c.str(what)?,
        c.int("userId")?,
        c.str("userName")?,
        c.opt_str("message")?.unwrap_or_default(),
    ))
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

/// `LOG_SWITCH`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LogSwitch {
    pub header: Header,
    pub last_job_id: u64,
}

// --------------------------------------------------------------------------- JOB_FINISH

/// `JOB_FINISH` (`lsb.acct`): the accounting record of a finished job.
///
/// Like [`JobNew`], the layout is common up to `loginShell`; then OpenLava/volclava write
/// `idx maxRMem maxRSwap "inFileSpool" "commandSpool"`, Basalt writes the same followed
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

impl JobFinish {
    fn parse(c: &mut Cursor<'_>, header: Header) -> Result<Self, ParseError> {
        let d = header.dialect();
        let mut j = JobFinish {
            header,
            ..JobFinish::default()
        };
        j.job_id = c.int("jobId")?;
        j.user_id = c.int("userId")?;
        j.options = c.bits("options")?;
        j.num_processors = c.int("numProcessors")?;
        j.submit_time = c.int("submitTime")?;
        j.begin_time = c.int("beginTime")?;
        j.term_time = c.int("termTime")?;
        j.start_time = c.int("startTime")?;
        j.user_name = c.str("userName")?;
        j.queue = c.str("queue")?;
        j.res_req = c.str("resReq")?;
        j.depend_cond = c.str("dependCond")?;
        j.pre_exec_cmd = c.str("preExecCmd")?;
        if d == Dialect::Volclava && j.options & VOLCLAVA_SUB_POST_EXEC != 0 {
            j.post_exec_cmd = c.str("postExecCmd")?;
        }
        j.from_host = c.str("fromHost")?;
        j.cwd = c.str("cwd")?;
        j.in_file = c.str("inFile")?;
        j.out_file = c.str("outFile")?;
        j.err_file = c.str("errFile")?;
        j.job_file = c.str("jobFile")?;
        let n: i64 = c.int("numAskedHosts")?;
        j.asked_hosts = c.hosts(n, "askedHosts")?;
        let n: i64 = c.int("numExHosts")?;
        j.exec_hosts = c.hosts(n, "execHosts")?;
        j.j_status = c.bits("jStatus")?;
        j.host_factor = c.float("hostFactor")?;
        j.job_name = c.str("jobName")?;
        j.command = c.str("command")?;
        j.rusage = Rusage::parse(c)?;
        j.mail_user = c.str("mailUser")?;
        j.project_name = c.str("projectName")?;
        j.exit_status = c.int("exitStatus")?;
        j.max_num_processors = c.int("maxNumProcessors")?;
        j.login_shell = c.str("loginShell")?;
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
                if j.parse_basalt_tail(c).is_err() {
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

    fn parse_basalt_tail(&mut self, c: &mut Cursor<'_>) -> Result<(), ParseError> {
        self.idx = c.int("idx")?;
        self.max_rmem = c.int("maxRMem")?;
        self.max_rswap = c.int("maxRSwap")?;
        self.in_file_spool = c.str("inFileSpool")?;
        self.command_spool = c.str("commandSpool")?;
        if c.str("Basalt mark")? != BASALT_MARK {
            return Err(ParseError::new(c.next_index() - 1, "no Basalt mark"));
        }
        self.basalt_extra = c.rest()?;
        Ok(())
    }

    fn write(&self, kind: &str, out: &mut String) {
        let d = self.header.dialect();
        let mut w = LineWriter::start(out, kind, &self.header.version, self.header.time);
        w.int(self.job_id)
            .int(self.user_id)
            .bits(self.options)
            .int(self.num_processors)
            .int(self.submit_time)
            .int(self.begin_time)
            .int(self.term_time)
            .int(self.start_time)
            .str(&self.user_name)
            .str(&self.queue)
            .str(&self.res_req)
            .str(&self.depend_cond)
            .str(&self.pre_exec_cmd);
        if d == Dialect::Volclava && self.options & VOLCLAVA_SUB_POST_EXEC != 0 {
            w.str(&self.post_exec_cmd);
        }
        w.str(&self.from_host)
            .str(&self.cwd)
            .str(&self.in_file)
            .str(&self.out_file)
            .str(&self.err_file)
            .str(&self.job_file)
            .hosts(&self.asked_hosts)
            .hosts(&self.exec_hosts)
            .bits(self.j_status)
            .f3_1(self.host_factor)
            .str(&self.job_name)
            .str(&self.command);
        self.rusage.write(&mut w);
        w.str(&self.mail_user)
            .str(&self.project_name)
            .int(self.exit_status)
            .int(self.max_num_processors)
            .str(&self.login_shell);
        if let Some(tail) = &self.foreign_tail {
            w.fields(tail);
            return;
        }
        w.int(self.idx)
            .int(self.max_rmem)
            .int(self.max_rswap)
            .str(&self.in_file_spool)
            .str(&self.command_spool);
        if d == Dialect::Lsf {
            w.str(BASALT_MARK).fields(&self.basalt_extra);
        }
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
    JobSigact(JobSigact),
    QueueCtrl(QueueCtrl),
    HostCtrl(HostCtrl),
    MbdStart(MbdStart),
    MbdDie(MbdDie),
    LoadIndex(LoadIndex),
    LogSwitch(LogSwitch),
    /// `JOB_FINISH` (lsb.acct).
    JobFinish(Box<JobFinish>),
    /// A type this crate does not model (`JOB_MODIFY2`, `CHKPNT`, `MIG`, `UNFULFILL`,
    /// `JOB_MSG`, `SBD_JOB_STATUS`, IBM LSF types, ...): kept with its fields so it can be
    /// written back unchanged.
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

    /// The job the record is about, for job records (for `Unknown` records: none).
    pub fn job_id(&self) -> Option<u64> {
        Some(match self {
            Record::JobNew(r) | Record::JobModify(r) => r.job_id,
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
            Record::JobSigact(r) => r.job_id,
            Record::JobFinish(r) => r.job_id,
            _ => return None,
        })
    }

    /// The array index of a job record (0 for an ordinary job).
    pub fn idx(&self) -> Option<u32> {
        Some(match self {
            Record::JobNew(r) | Record::JobModify(r) => r.idx,
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
            Record::JobStart(r) | Record::PreExecStart(r) => r.write(kind, out),
            Record::JobStartAccept(r) => r.write(kind, out),
            Record::JobExecute(r) => r.write(kind, out),
            Record::JobStatus(r) => r.write(kind, out),
            Record::JobSignal(r) => r.write(kind, out),
            Record::JobSwitch(r) => r.write(kind, out),
            Record::JobMove(r) => r.write(kind, out),
            Record::JobRequeue(r) => {
                LineWriter::start(out, kind, &r.header.version, r.header.time)
                    .int(r.job_id)
                    .int(r.idx);
            }
            Record::JobClean(r) => {
                LineWriter::start(out, kind, &r.header.version, r.header.time)
                    .int(r.job_id)
                    .int(r.idx);
            }
            Record::JobForce(r) => r.write(kind, out),
            Record::JobSigact(r) => r.write(kind, out),
            Record::QueueCtrl(r) => {
                LineWriter::start(out, kind, &r.header.version, r.header.time)
                    .int(r.op_code)
                    .str(&r.queue)
                    .int(r.user_id)
                    .str(&r.user_name)
                    .str(&r.message);
            }
            Record::HostCtrl(r) => {
                LineWriter::start(out, kind, &r.header.version, r.header.time)
                    .int(r.op_code)
                    .str(&r.host)
                    .int(r.user_id)
                    .str(&r.user_name)
                    .str(&r.message);
            }
            Record::MbdStart(r) => {
                LineWriter::start(out, kind, &r.header.version, r.header.time)
                    .str(&r.master)
                    .str(&r.cluster)
                    .int(r.num_hosts)
                    .int(r.num_queues);
            }
            Record::MbdDie(r) => {
                let mut w = LineWriter::start(out, kind, &r.header.version, r.header.time);
                w.str(&r.master).int(r.num_remove_jobs).int(r.exit_code);
                if r.header.dialect() != Dialect::OpenLava || !r.message.is_empty() {
                    w.str(&r.message);
                }
            }
            Record::LoadIndex(r) => {
                LineWriter::start(out, kind, &r.header.version, r.header.time).hosts(&r.names);
            }
            Record::LogSwitch(r) => {
                LineWriter::start(out, kind, &r.header.version, r.header.time).int(r.last_job_id);
            }
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
/// ignored; a type this crate does not model becomes [`Record::Unknown`].
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
        "JOB_START" => Record::JobStart(JobStart::parse(c, h)?),
        "PRE_EXEC_START" => Record::PreExecStart(JobStart::parse(c, h)?),
        "JOB_START_ACCEPT" => Record::JobStartAccept(JobStartAccept::parse(c, h)?),
        "JOB_EXECUTE" => Record::JobExecute(JobExecute::parse(c, h)?),
        "JOB_STATUS" => Record::JobStatus(JobStatus::parse(c, h)?),
        "JOB_SIGNAL" => Record::JobSignal(JobSignal::parse(c, h)?),
        "JOB_SWITCH" => Record::JobSwitch(JobSwitch::parse(c, h)?),
        "JOB_MOVE" => Record::JobMove(JobMove::parse(c, h)?),
        "JOB_REQUEUE" => {
            let (job_id, idx) = parse_job_idx(c)?;
            Record::JobRequeue(JobRequeue {
                header: h,
                job_id,
                idx,
            })
        }
        "JOB_CLEAN" => {
            let (job_id, idx) = parse_job_idx(c)?;
            Record::JobClean(JobClean {
                header: h,
                job_id,
                idx,
            })
        }
        "JOB_FORCE" => Record::JobForce(JobForce::parse(c, h)?),
        "JOB_SIGACT" => Record::JobSigact(JobSigact::parse(c, h)?),
        "QUEUE_CTRL" => {
            let (op_code, queue, user_id, user_name, message) = parse_ctrl(c, "queue")?;
            Record::QueueCtrl(QueueCtrl {
                header: h,
                op_code,
                queue,
                user_id,
                user_name,
                message,
            })
        }
        "HOST_CTRL" => {
            let (op_code, host, user_id, user_name, message) = parse_ctrl(c, "host")?;
            Record::HostCtrl(HostCtrl {
                header: h,
                op_code,
                host,
                user_id,
                user_name,
                message,
            })
        }
        "MBD_START" => Record::MbdStart(MbdStart {
            header: h,
            master: c.str("master")?,
            cluster: c.str("cluster")?,
            num_hosts: c.int("numHosts")?,
            num_queues: c.int("numQueues")?,
        }),
        "MBD_DIE" => Record::MbdDie(MbdDie {
            header: h,
            master: c.str("master")?,
            num_remove_jobs: c.int("numRemoveJobs")?,
            exit_code: c.int("exitCode")?,
            message: c.opt_str("message")?.unwrap_or_default(),
        }),
        "LOAD_INDEX" => {
            let n: i64 = c.int("nIdx")?;
            let mut names = Vec::new();
            for _ in 0..n.max(0) {
                names.push(c.str("name")?);
            }
            Record::LoadIndex(LoadIndex { header: h, names })
        }
        "LOG_SWITCH" => Record::LogSwitch(LogSwitch {
            header: h,
            last_job_id: c.int("lastJobId")?,
        }),
        "JOB_FINISH" => Record::JobFinish(Box::new(JobFinish::parse(c, h)?)),
        _ => Record::Unknown {
            kind,
            header: h,
            fields: c.rest()?,
        },
    };
    Ok(Some(rec))
}
