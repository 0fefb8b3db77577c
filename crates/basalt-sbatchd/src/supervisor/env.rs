//! The environment a job starts with (cli-contract.md §8).
//!
//! sbatchd's own environment is never passed on. The job starts with the execution
//! user's defaults (`HOME USER LOGNAME SHELL PATH`), which the job file's restored
//! submission environment then overrides, plus the `LSB_*`/`LS_*` variables set here,
//! which the job file never touches.

use crate::paths;
use basalt_proto::sbatchd::JobSpec;

/// What, besides the job spec, decides the environment.
#[derive(Debug, Clone, Default)]
pub struct EnvContext {
    pub cluster: String,
    /// The execution user's name, home, login shell and primary group name.
    pub exec_user: String,
    pub home: String,
    pub shell: String,
    pub group: Option<String>,
    /// The job file as copied to the execution host (`LSB_JOBFILENAME`).
    pub job_file: String,
    /// The `LSB_DJOB_HOSTFILE` path.
    pub host_file: String,
    /// The pid of the job's top process (`LS_JOBPID`).
    pub pid: u32,
    /// The `-o`/`-e` files after `%J`/`%I` substitution (`LSB_OUTPUTFILE`,
    /// `LSB_ERRORFILE`); None when not given.
    pub out_file: Option<String>,
    pub err_file: Option<String>,
    pub envdir: String,
    pub bindir: Option<String>,
    pub serverdir: Option<String>,
    pub libdir: Option<String>,
}

/// The default `PATH` of a job before the job file restores the submitter's.
pub const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin";

/// `LSB_TRAPSIGS`: the job file runs it so the wrapper shell survives the kill sequence.
pub const TRAPSIGS: &str = "trap # 15 10 12 2 1";

/// The job's `LSB_ACCT_FILE`: `/tmp/.<submit time>.<job id>.acct` on this host, where
/// `blaunch` records the usage of the job's tasks ([`basalt_core::job::task_usage`]).
pub(super) fn acct_file(spec: &JobSpec) -> String {
    format!("/tmp/.{}.acct", spec.job_file_name)
}

/// Build the job's starting environment, in a stable order.
pub fn job_env(spec: &JobSpec, ctx: &EnvContext) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = Vec::new();
    let mut set = |k: &str, v: String| env.push((k.to_owned(), v));
    set("HOME", ctx.home.clone());
    set("USER", ctx.exec_user.clone());
    set("LOGNAME", ctx.exec_user.clone());
    set(
        "SHELL",
        if ctx.shell.is_empty() {
            "/bin/sh".to_owned()
        } else {
            ctx.shell.clone()
        },
    );
    let path = match &ctx.bindir {
        Some(b) if !b.is_empty() => format!("{DEFAULT_PATH}:{b}"),
        _ => DEFAULT_PATH.to_owned(),
    };
    set("PATH", path);

    let slots = if spec.exec_hosts.is_empty() {
        1
    } else {
        spec.exec_hosts.len() as u32
    };
    let numproc = if spec.num_processors == 0 {
        slots
    } else {
        spec.num_processors
    };
    let maxproc = spec.max_processors.max(numproc);
    set("LSB_JOBID", spec.job_id.to_string());
    set(
        "LSB_JOBNAME",
        paths::element_name(&spec.job_name, spec.is_array, spec.idx, &spec.command),
    );
    set("LSB_JOBINDEX", spec.idx.to_string());
    set("LSB_QUEUE", spec.queue.clone());
    set("LSB_HOSTS", spec.exec_hosts.join(" "));
    set("LSB_MCPU_HOSTS", paths::mcpu_hosts(&spec.exec_hosts));
    set("LSB_DJOB_NUMPROC", numproc.to_string());
    if spec.interactive != 0 {
        set("LSB_INTERACTIVE", "Y".to_owned());
    }
    set("LSB_DJOB_HOSTFILE", ctx.host_file.clone());
    set("LSB_MAX_NUM_PROCESSORS", maxproc.to_string());
    set("LSB_SUBCWD", spec.sub_cwd.clone());
    set("LS_SUBCWD", spec.sub_cwd.clone());
    set("LSB_SUB_HOST", spec.from_host.clone());
    if let Some(f) = &ctx.out_file {
        set("LSB_OUTPUTFILE", f.clone());
    }
    if let Some(f) = &ctx.err_file {
        set("LSB_ERRORFILE", f.clone());
    }
    set("LSB_JOBFILENAME", ctx.job_file.clone());
    if spec.chkpnt_dir.is_empty() {
        set("LSB_CHKFILENAME", ctx.job_file.clone());
    }
    set("LSB_EXEC_CLUSTER", ctx.cluster.clone());
    set("LSB_JOB_EXECUSER", ctx.exec_user.clone());
    if let Some(g) = &ctx.group {
        set("LSB_UNIXGROUP", g.clone());
    }
    if !spec.res_req.is_empty() {
        set("LSB_EFFECTIVE_RSRCREQ", spec.res_req.clone());
    }
    if !spec.project.is_empty() {
        set("LSB_PROJECT_NAME", spec.project.clone());
    }
    set("LSB_TRAPSIGS", TRAPSIGS.to_owned());
    set("LSB_EXIT_PRE_ABORT", "99".to_owned());
    set("LSB_ACCT_FILE", acct_file(spec));
    set("LS_JOBPID", ctx.pid.to_string());
    set("LS_EXEC_T", "START".to_owned());
    set("LSF_ENVDIR", ctx.envdir.clone());
    for (k, v) in [
        ("LSF_BINDIR", &ctx.bindir),
        ("LSF_SERVERDIR", &ctx.serverdir),
        ("LSF_LIBDIR", &ctx.libdir),
    ] {
        if let Some(v) = v.as_ref().filter(|v| !v.is_empty()) {
            set(k, v.clone());
        }
    }
    env.extend(chkpnt_env(spec));
    env
}

/// The checkpoint method of a job (`default` when none is named).
pub(super) fn chkpnt_method(spec: &JobSpec) -> &str {
    match spec.chkpnt_method.trim() {
        "" => "default",
        m => m,
    }
}

/// A checkpointable job's variables (none for another job): `LSB_CHKPNT_DIR`,
/// `LSB_CHKPNT_PERIOD` (when periodic), `LSB_ECHKPNT_METHOD`, `LSB_CHKFILENAME` (the copy
/// of the job file in the checkpoint directory) and, restarting, `LSB_RESTART=Y` and
/// `LSB_OLD_JOBID`.
pub fn chkpnt_env(spec: &JobSpec) -> Vec<(String, String)> {
    let mut env = Vec::new();
    if spec.chkpnt_dir.is_empty() {
        return env;
    }
    let mut set = |k: &str, v: String| env.push((k.to_owned(), v));
    set("LSB_CHKPNT_DIR", spec.chkpnt_dir.clone());
    if spec.chkpnt_period > 0 {
        set("LSB_CHKPNT_PERIOD", spec.chkpnt_period.to_string());
    }
    set("LSB_ECHKPNT_METHOD", chkpnt_method(spec).to_owned());
    set("LSB_CHKFILENAME", chkpnt_file(spec));
    if spec.restart {
        set("LSB_RESTART", "Y".to_owned());
        if !spec.restart_old_job.is_empty() {
            set("LSB_OLD_JOBID", spec.restart_old_job.clone());
        }
    }
    env
}

/// `LSB_CHKFILENAME` of a checkpointable job: its job file's copy in the checkpoint
/// directory.
pub(super) fn chkpnt_file(spec: &JobSpec) -> String {
    std::path::Path::new(&spec.chkpnt_dir)
        .join(&spec.job_file_name)
        .to_string_lossy()
        .into_owned()
}

/// The `LSB_DJOB_HOSTFILE` content: one host name per slot, one per line.
pub fn host_file_text(exec_hosts: &[String]) -> String {
    let mut s = String::new();
    for h in exec_hosts {
        s.push_str(h);
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> JobSpec {
        JobSpec {
            job_id: 102,
            idx: 0,
            attempt: 1,
            user: "alice".into(),
            job_name: "myjob".into(),
            queue: "normal".into(),
            exec_hosts: vec!["hostA".into(), "hostA".into(), "hostB".into()],
            sub_cwd: "/home/alice/run".into(),
            out_file: "out.%J".into(),
            from_host: "hostB".into(),
            job_file_name: "1700000000.102".into(),
            command: "env".into(),
            res_req: "select[type==any]".into(),
            num_processors: 3,
            max_processors: 4,
            ..Default::default()
        }
    }

    fn ctx() -> EnvContext {
        EnvContext {
            cluster: "basalt".into(),
            exec_user: "alice".into(),
            home: "/home/alice".into(),
            shell: "/bin/bash".into(),
            group: Some("users".into()),
            job_file: "/home/alice/.lsbatch/1700000000.102".into(),
            host_file: "/home/alice/.lsbatch/1700000000.102.hostfile".into(),
            pid: 4242,
            out_file: Some("out.102".into()),
            err_file: None,
            envdir: "/etc/lsf".into(),
            bindir: Some("/opt/lsf/bin".into()),
            serverdir: None,
            libdir: None,
        }
    }

    fn get<'a>(env: &'a [(String, String)], k: &str) -> Option<&'a str> {
        env.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str())
    }

    #[test]
    fn lsb_variables() {
        let env = job_env(&spec(), &ctx());
        assert_eq!(get(&env, "LSB_JOBID"), Some("102"));
        assert_eq!(get(&env, "LSB_JOBNAME"), Some("myjob"));
        assert_eq!(get(&env, "LSB_JOBINDEX"), Some("0"));
        assert_eq!(get(&env, "LSB_HOSTS"), Some("hostA hostA hostB"));
        assert_eq!(get(&env, "LSB_MCPU_HOSTS"), Some("hostA 2 hostB 1"));
        assert_eq!(get(&env, "LSB_DJOB_NUMPROC"), Some("3"));
        assert_eq!(get(&env, "LSB_MAX_NUM_PROCESSORS"), Some("4"));
        assert_eq!(get(&env, "LSB_OUTPUTFILE"), Some("out.102"));
        assert_eq!(get(&env, "LSB_ERRORFILE"), None);
        assert_eq!(get(&env, "LSB_SUBCWD"), Some("/home/alice/run"));
        assert_eq!(get(&env, "LS_SUBCWD"), Some("/home/alice/run"));
        assert_eq!(get(&env, "LSB_SUB_HOST"), Some("hostB"));
        assert_eq!(get(&env, "LSB_TRAPSIGS"), Some("trap # 15 10 12 2 1"));
        assert_eq!(get(&env, "LSB_EXIT_PRE_ABORT"), Some("99"));
        assert_eq!(
            get(&env, "LSB_ACCT_FILE"),
            Some("/tmp/.1700000000.102.acct")
        );
        assert_eq!(get(&env, "LS_JOBPID"), Some("4242"));
        assert_eq!(get(&env, "LS_EXEC_T"), Some("START"));
        assert_eq!(get(&env, "LSB_UNIXGROUP"), Some("users"));
        assert_eq!(get(&env, "LSF_BINDIR"), Some("/opt/lsf/bin"));
        assert_eq!(get(&env, "LSF_SERVERDIR"), None);
        assert!(get(&env, "PATH").is_some_and(|p| p.ends_with(":/opt/lsf/bin")));
        assert_eq!(get(&env, "HOME"), Some("/home/alice"));
        // Every name once.
        let mut names: Vec<&str> = env.iter().map(|(k, _)| k.as_str()).collect();
        names.sort();
        let n = names.len();
        names.dedup();
        assert_eq!(names.len(), n);
        // Not checkpointable: LSB_CHKFILENAME is the job file, no checkpoint variables.
        assert_eq!(
            get(&env, "LSB_CHKFILENAME"),
            Some("/home/alice/.lsbatch/1700000000.102")
        );
        assert_eq!(get(&env, "LSB_CHKPNT_DIR"), None);
        assert_eq!(get(&env, "LSB_RESTART"), None);
    }

    #[test]
    fn checkpointable_and_restarted_jobs() {
        let mut s = spec();
        s.chkpnt_dir = "/ck/102".into();
        s.chkpnt_period = 600;
        let env = job_env(&s, &ctx());
        assert_eq!(get(&env, "LSB_CHKPNT_DIR"), Some("/ck/102"));
        assert_eq!(get(&env, "LSB_CHKPNT_PERIOD"), Some("600"));
        assert_eq!(get(&env, "LSB_ECHKPNT_METHOD"), Some("default"));
        assert_eq!(get(&env, "LSB_CHKFILENAME"), Some("/ck/102/1700000000.102"));
        assert_eq!(get(&env, "LSB_RESTART"), None);
        let mut names: Vec<&str> = env.iter().map(|(k, _)| k.as_str()).collect();
        names.sort();
        let n = names.len();
        names.dedup();
        assert_eq!(names.len(), n, "every name once");
        s.chkpnt_period = 0;
        s.chkpnt_method = "blcr".into();
        s.restart = true;
        s.restart_old_job = "77".into();
        let env = job_env(&s, &ctx());
        assert_eq!(get(&env, "LSB_CHKPNT_PERIOD"), None);
        assert_eq!(get(&env, "LSB_ECHKPNT_METHOD"), Some("blcr"));
        assert_eq!(get(&env, "LSB_RESTART"), Some("Y"));
        assert_eq!(get(&env, "LSB_OLD_JOBID"), Some("77"));
    }

    #[test]
    fn array_element_and_single_slot() {
        let mut s = spec();
        s.is_array = true;
        s.idx = 7;
        s.job_name = "arr[1-10]".into();
        s.exec_hosts = vec![];
        s.num_processors = 0;
        s.max_processors = 0;
        let env = job_env(&s, &ctx());
        assert_eq!(get(&env, "LSB_JOBNAME"), Some("arr[7]"));
        assert_eq!(get(&env, "LSB_JOBINDEX"), Some("7"));
        assert_eq!(get(&env, "LSB_DJOB_NUMPROC"), Some("1"));
        assert_eq!(get(&env, "LSB_MAX_NUM_PROCESSORS"), Some("1"));
        assert_eq!(host_file_text(&s.exec_hosts), "");
        assert_eq!(
            host_file_text(&["a".to_string(), "a".to_string()]),
            "a\na\n"
        );
    }
}
