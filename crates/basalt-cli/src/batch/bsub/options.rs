//! [`BsubOpts`]: what the command line and the `#BSUB` directives asked for.

use super::*;

/// Everything bsub options can say. `None` = not given.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct BsubOpts {
    pub job_name: Option<String>,
    pub queue: Option<String>,
    /// -n min[,max].
    pub procs: Option<(u32, u32)>,
    /// -o / -oo: (path, overwrite).
    pub out: Option<(String, bool)>,
    pub err: Option<(String, bool)>,
    pub in_file: Option<String>,
    /// Limits by LSF_RLIMIT_* position: seconds for CPU and RUN, KB for sizes.
    pub limits: [Option<i64>; rlimit::COUNT],
    pub cwd: Option<String>,
    pub project: Option<String>,
    pub user_group: Option<String>,
    pub res_req: Vec<String>,
    pub hosts: Option<Vec<String>>,
    pub depend: Option<String>,
    pub begin: Option<i64>,
    pub term: Option<i64>,
    pub pre_exec: Option<String>,
    /// -Ep: the job's post-execution command.
    pub post_exec: Option<String>,
    /// -Q: requeue exit values.
    pub requeue_values: Option<String>,
    pub login_shell: Option<String>,
    pub mail_user: Option<String>,
    /// -app: an application profile.
    pub app: Option<String>,
    /// -a: the application-specific esubs to run (`"name[(arg,...)] ..."`, as given).
    pub esub_apps: Option<String>,
    pub nnodes: Option<u32>,
    /// Every -env value, in order.
    pub env: Vec<String>,
    pub exclusive: bool,
    pub hold: bool,
    pub rerunnable: bool,
    pub notify_begin: bool,
    pub notify_end: bool,
    /// -K: wait for the job to end; bsub exits with its exit code.
    pub wait: bool,
    /// An interactive job: 1 `-I`, 2 `-Ip`, 3 `-Is` (0: a batch job).
    pub interactive: u32,
    /// Every -f: (local file as given, remote file, LSF's XF_OP_* bits).
    pub files: Vec<(String, String, u32)>,
    /// -k "dir [period] [method=name]": the checkpoint directory as given, the period
    /// (seconds) and the method.
    pub chkpnt: Option<Chkpnt>,
    /// Options accepted and ignored.
    pub ignored: Vec<String>,
}

/// `bsub -k "dir [init=minutes] [period] [method=name]"`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Chkpnt {
    pub dir: String,
    /// Seconds (from minutes).
    pub period: Option<i64>,
    /// The initial period, seconds (from minutes).
    pub init: Option<i64>,
    pub method: Option<String>,
}

impl Chkpnt {
    /// Parse `-k`'s value: a directory, then a period in minutes, `init=minutes` and/or
    /// `method=name`, each at most once.
    pub fn parse(v: &str) -> Option<Chkpnt> {
        let v = v.trim();
        let v = v
            .strip_prefix('"')
            .and_then(|s| s.strip_suffix('"'))
            .unwrap_or(v);
        let mut words = v.split_whitespace();
        let mut c = Chkpnt {
            dir: words.next()?.to_owned(),
            ..Default::default()
        };
        for w in words {
            if let Some(i) = w.strip_prefix("init=") {
                let minutes: i64 = i.parse().ok().filter(|m| *m > 0)?;
                if c.init.is_some() {
                    return None;
                }
                c.init = Some(minutes.checked_mul(60)?);
            } else if let Some(m) = w.strip_prefix("method=") {
                if m.is_empty() || c.method.is_some() || m.contains('/') {
                    return None;
                }
                c.method = Some(m.to_owned());
            } else {
                let minutes: i64 = w.parse().ok().filter(|m| *m > 0)?;
                if c.period.is_some() {
                    return None;
                }
                c.period = Some(minutes.checked_mul(60)?);
            }
        }
        Some(c)
    }
}

impl BsubOpts {
    /// Command-line options (`self`) over script directives (`script`); `-R` and `-env`
    /// accumulate (script first).
    pub fn over(self, script: BsubOpts) -> BsubOpts {
        let mut limits = script.limits;
        for (i, l) in self.limits.iter().enumerate() {
            if l.is_some() {
                limits[i] = *l;
            }
        }
        let mut res_req = script.res_req;
        res_req.extend(self.res_req);
        let mut env = script.env;
        env.extend(self.env);
        let mut ignored = script.ignored;
        ignored.extend(self.ignored);
        BsubOpts {
            job_name: self.job_name.or(script.job_name),
            queue: self.queue.or(script.queue),
            procs: self.procs.or(script.procs),
            out: self.out.or(script.out),
            err: self.err.or(script.err),
            in_file: self.in_file.or(script.in_file),
            limits,
            cwd: self.cwd.or(script.cwd),
            project: self.project.or(script.project),
            user_group: self.user_group.or(script.user_group),
            res_req,
            hosts: self.hosts.or(script.hosts),
            depend: self.depend.or(script.depend),
            begin: self.begin.or(script.begin),
            term: self.term.or(script.term),
            pre_exec: self.pre_exec.or(script.pre_exec),
            post_exec: self.post_exec.or(script.post_exec),
            requeue_values: self.requeue_values.or(script.requeue_values),
            login_shell: self.login_shell.or(script.login_shell),
            mail_user: self.mail_user.or(script.mail_user),
            app: self.app.or(script.app),
            esub_apps: self.esub_apps.or(script.esub_apps),
            nnodes: self.nnodes.or(script.nnodes),
            env,
            exclusive: self.exclusive || script.exclusive,
            hold: self.hold || script.hold,
            rerunnable: self.rerunnable || script.rerunnable,
            notify_begin: self.notify_begin || script.notify_begin,
            notify_end: self.notify_end || script.notify_end,
            wait: self.wait || script.wait,
            interactive: if self.interactive != 0 {
                self.interactive
            } else {
                script.interactive
            },
            files: {
                let mut f = script.files;
                f.extend(self.files);
                f
            },
            chkpnt: self.chkpnt.or(script.chkpnt),
            ignored,
        }
    }
}
